"""callout-server: the LLM hub behind an outbound call-center dialer."""

__version__ = "0.1.0"
