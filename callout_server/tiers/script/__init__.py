"""Script tier: call scripts and chat-tier prompts from a one-sentence brief, kept as drafts."""
