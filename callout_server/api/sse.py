"""Server-sent events as the contract shapes them: `event: <name>` + one JSON object per `data:`.

The event name is also inside the object (`"event"`), for clients that read only `data:`.
"""

from __future__ import annotations

from typing import Any

import orjson

SSE_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # nginx: do not buffer a live stream
}


def sse_event(name: str, data: dict[str, Any]) -> bytes:
    payload = orjson.dumps({"event": name, **data})
    return b"event: " + name.encode() + b"\ndata: " + payload + b"\n\n"
