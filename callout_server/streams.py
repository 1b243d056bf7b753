"""What a tier's stream yields: the contract's events as values, not wire bytes.

The chat and script tiers produce `StreamEvent`s (`sentence`, `text_delta`, `tool_call`,
`usage`, `end`); only the routers frame them as server-sent events (`api/sse.py`), so a
tier can be driven and tested without the wire format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class StreamEvent:
    name: str
    data: dict[str, Any]
