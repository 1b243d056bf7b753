"""One lane of `LLMClient`: a tier's connection pool, reached two ways under one limit.

    complete()  -> LeanPool (lean_http.py): keep-alive HTTP/1.1 on asyncio + httptools
    stream()    -> httpx over the aiohttp transport, through `SlotTransport`

Both take a slot of the lane's one `Slots(max_connections)` for as long as they hold a
connection (a stream until its response is closed), so a burst of either can never take more
than the lane's `PoolLimits.max_connections` together, and one tier's burst never takes the
connections another tier needs.
"""

from __future__ import annotations

import httpx
from httpx_aiohttp import AiohttpTransport

from callout_server.llm.lean_http import LeanPool, Slots
from callout_server.llm.targets import TargetPolicy
from callout_server.llm.transport import (
    KEEPALIVE_EXPIRY_S,
    PoolLimits,
    make_http_client,
    make_transport,
)


class _SlotStream(httpx.AsyncByteStream):
    """A response body that gives its slot back once, when it is closed."""

    def __init__(self, inner: httpx.AsyncByteStream, slots: Slots) -> None:
        self._inner = inner
        self._slots: Slots | None = slots

    async def __aiter__(self):  # type: ignore[override]
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            slots, self._slots = self._slots, None
            if slots is not None:
                slots.release()


class SlotTransport(httpx.AsyncBaseTransport):
    """The aiohttp transport, each request holding a slot of the lane until its response
    is closed (or fails)."""

    def __init__(self, inner: AiohttpTransport, slots: Slots) -> None:
        self.inner = inner
        self._slots = slots

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await self._slots.acquire()
        try:
            response = await self.inner.handle_async_request(request)
        except BaseException:
            self._slots.release()
            raise
        response.stream = _SlotStream(response.stream, self._slots)  # type: ignore[arg-type]
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class Lane:
    """One connection pool: its bounds, the slots they make, the lean pool `complete()`
    posts on, and the httpx client (aiohttp transport) streams use."""

    __slots__ = ("http", "lean", "limits", "slots", "transport")

    def __init__(self, limits: PoolLimits, targets: TargetPolicy) -> None:
        self.limits = limits
        self.slots = Slots(limits.max_connections)
        self.transport = make_transport(max_connections=limits.max_connections,
                                        resolver=targets.resolver)
        self.http = make_http_client(transport=SlotTransport(self.transport, self.slots))
        self.lean = LeanPool(self.slots, ssl_context=self.transport.ssl_context,
                             guarded=not targets.allow_metadata, keepalive_s=KEEPALIVE_EXPIRY_S)

    async def aclose(self) -> None:
        self.lean.close()
        await self.http.aclose()  # closes the transport and its aiohttp session
