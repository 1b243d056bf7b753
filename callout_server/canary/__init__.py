"""Canary rollout: a share of live calls, split by call_id, sent to a candidate configuration,
watched against the active one, promoted or rolled back (docs/canary.md)."""
