"""NLU tier: one strict JSON decision (intent + slots) per call node, inside a deadline."""
