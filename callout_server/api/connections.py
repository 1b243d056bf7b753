"""What a connection may cost the worker before it has sent a request: bounded.

uvicorn (httptools) closes a keep-alive connection only after a response, and only while no
byte arrives: a socket that connects and says nothing, or trickles its headers a byte at a
time, is held for ever, and 1,100 of them exhaust a 1,024-descriptor worker. The server's
own limits (`[server]`, server-neutral; `serve --help`) are kept here, per connection:

    keepalive_timeout_s   an idle connection (just opened, or between requests: no byte of a
                          request yet) is closed after this long; stray line ends do not count
    header_timeout_s      from a request's first byte until its headers are complete: 408
    body_timeout_s        from the end of its headers until its body is complete: 408
    max_connections       open connections per worker; beyond it a new one is answered 503
                          `too_many_connections` (the contract's envelope, `Retry-After`,
                          `Connection: close`) and closed before anything is read

A 408 is the contract's envelope too (`request_timeout`), and the connection is closed. The
response is the application's and has no limit here (a chat turn streams as long as it
takes). A request that arrives whole (the dialer's) arms no timer beyond uvicorn's own
keep-alive timer: the header and body timers are armed only when a read ends with them
incomplete. `GuardedHttpToolsProtocol` is uvicorn's
HttpToolsProtocol with these timers; what other servers call the same limits is in
docs/configuration.md.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import resource
from dataclasses import dataclass
from typing import Any

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from callout_server.i18n import Locale, text
from callout_server.streams import Closing

log = logging.getLogger(__name__)

# Seconds a refused client is told to wait: idle connections free their slots this fast.
RETRY_AFTER_S = 1


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    keepalive_timeout_s: float = 20.0
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 2048
    locale: Locale = "zh"  # no request, no Accept-Language: the server's default


def raw_response(status: int, reason: str, code: str, message: str,
                 headers: tuple[tuple[str, str], ...] = ()) -> bytes:
    """A whole HTTP/1.1 error response in the contract's envelope, closing the connection."""
    body = orjson.dumps({"error": {"code": code, "message": message}})
    head = [f"HTTP/1.1 {status} {reason}", "content-type: application/json",
            f"content-length: {len(body)}", "connection: close",
            *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


# The key of the lifespan state's `Closing` (app.py yields it, uvicorn passes the state on).
CLOSING_STATE = "callout_closing"


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with an idle timer, header and body timers, a ceiling.

    The idle timer is uvicorn's own keep-alive timer (`timeout_keep_alive_task`), armed on
    connection too and cancelled only by a request's first byte, not by any byte; the header
    and body timers (`_timer`) are armed only when a read ends with them incomplete. A request
    that arrives whole costs no timer more than uvicorn's.
    """

    def __init__(self, *args: Any, limits: ConnectionLimits | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits or ConnectionLimits()  # the defaults: `--http module:Class`
        self.timeout_keep_alive = self.limits.keepalive_timeout_s  # what uvicorn arms
        self._timer: asyncio.TimerHandle | None = None
        # Loop times the request in progress must have its headers / its body in by.
        self._headers_due: float | None = None
        self._body_due: float | None = None

    # -- the timers --------------------------------------------------------------------
    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _unset_keepalive_if_required(self) -> None:
        """uvicorn's hook, called on every byte received: the idle timer stays armed (stray
        line ends are no request); `_cancel_idle` is what ends it."""

    def _cancel_idle(self) -> None:
        if self.timeout_keep_alive_task is not None:
            self.timeout_keep_alive_task.cancel()
            self.timeout_keep_alive_task = None

    def _headers_expired(self) -> None:
        self._timed_out("request_headers_timeout", self.limits.header_timeout_s)

    def _body_expired(self) -> None:
        self._timed_out("request_body_timeout", self.limits.body_timeout_s)

    def _timed_out(self, key: str, seconds: float) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        cycle = self.cycle  # in the header phase: the previous request's, or none
        if cycle is None or cycle.response_complete or not cycle.response_started:
            message = text(key, self.limits.locale, seconds=f"{seconds:g}")
            self.transport.write(raw_response(408, "Request Timeout", "request_timeout",
                                              message))
        self.transport.close()  # the app's receive() now says the client is gone

    # -- uvicorn's protocol and parser callbacks ---------------------------------------
    def shutdown(self) -> None:
        """uvicorn's graceful shutdown, called on every connection once it stops accepting:
        the worker's open streams are told first (each ends `cancelled` at once), so a
        streaming connection completes and closes instead of holding the exit up."""
        closing: Closing | None = self.app_state.get(CLOSING_STATE)
        if closing is not None:
            closing.begin()  # once per worker, whichever connection comes first
        super().shutdown()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            message = text("too_many_connections", self.limits.locale)
            transport.write(raw_response(503, "Service Unavailable", "too_many_connections",
                                         message, (("retry-after", str(RETRY_AFTER_S)),)))
            transport.close()
            return
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_idle()
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._timer is None and not self.transport.is_closing():
            # What is still incomplete at the end of a read gets its timer (once).
            if self._headers_due is not None:
                self._timer = self.loop.call_at(self._headers_due, self._headers_expired)
            elif self._body_due is not None:
                self._timer = self.loop.call_at(self._body_due, self._body_expired)

    def on_message_begin(self) -> None:
        self._cancel_idle()
        super().on_message_begin()
        # The first byte of a request: its headers have this long, however they trickle.
        self._headers_due = self.loop.time() + self.limits.header_timeout_s

    def on_headers_complete(self) -> None:
        self._headers_due = None
        self._disarm()
        self._body_due = self.loop.time() + self.limits.body_timeout_s
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._body_due = None
        self._disarm()
        super().on_message_complete()

    def on_response_complete(self) -> None:
        self._cancel_idle()  # uvicorn's own cancel is the hook made a no-op above
        super().on_response_complete()  # idle again: uvicorn arms the keep-alive timer


def uvicorn_protocol(limits: ConnectionLimits) -> Any:
    """The `http=` argument for uvicorn: picklable (a partial of a module-level class), so
    every worker process of `--workers N` gets the same limits."""
    return functools.partial(GuardedHttpToolsProtocol, limits=limits)


def raise_open_files_limit(needed: int) -> tuple[int, int]:
    """Raise this process's soft descriptor limit towards `needed` (up to the hard limit);
    returns (soft, hard) after. Workers inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return soft, hard
