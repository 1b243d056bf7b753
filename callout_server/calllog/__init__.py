"""The LLM call log: one record per model call of every tier, written off the hot path.

A tier hands a call's report (`upstream.CallReport`) to `reports.record_call`, which makes
the `CallRecord` (`reports.to_record`); `DiagnosticsRecorder` queues it (bounded, drops the
oldest on overflow and counts it) and a background task batches the inserts into
`callout.llm_call_logs`; `router` serves ops' reads of it.
"""
