"""`serve --workers N`: uvicorn's supervisor, each worker with a listening socket of its own.

uvicorn binds one socket and hands it to every worker. The worker that wakes first accepts
whatever connections wait, so a dialer that opens its keep-alive connections at once lands
most of them on one worker, and they stay there: 19.7 s of CPU on one worker against 6.3 s
on the other in one run (bench/README.md, "Phase 5"), the second worker mostly idle while
the first queues. Here each worker gets its own socket, bound to the same address with
SO_REUSEPORT: the kernel spreads new connections over the listening sockets of the group by
a hash of their addresses (nginx's `reuseport`), whichever worker is awake.

The supervisor is uvicorn's, unchanged: health pings, a dead or hung worker replaced,
SIGHUP's rolling restart, SIGTTIN/SIGTTOU, SIGINT/SIGTERM. It reads `sockets` each time it
starts a worker; here that binds a fresh socket for the worker, and once the worker has
started (a spawned process holds its own copy of the descriptor) the supervisor closes its
copy. So a socket lives exactly as long as its worker: a worker that dies takes its socket
out of the group, and the kernel sends new connections to the others until its replacement
listens. What SO_REUSEPORT costs: connections a worker had not yet accepted when it stopped
(a restart, a crash) are reset rather than taken by another worker; clients retry those as
any dropped connection (the dialer's retry policy, docs/workers.md).
"""

from __future__ import annotations

import logging
import socket
import sys

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.supervisors.multiprocess import Multiprocess

log = logging.getLogger("uvicorn.error")


def reuse_port_available() -> bool:
    return hasattr(socket, "SO_REUSEPORT")  # Linux, the BSDs, macOS; not Windows


class ReusePortWorkers(Multiprocess):
    """uvicorn's `Multiprocess` with a socket per worker in one SO_REUSEPORT group."""

    def __init__(self, config: Config) -> None:
        self._host = config.host
        self._port = config.port
        self._family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
        self._handed: list[socket.socket] = []  # bound for a worker, not yet closed here
        try:
            first = self._bind()  # a taken address is refused before any worker starts
        except OSError as exc:
            log.error("cannot listen on %s:%d: %s", self._host, self._port, exc)
            sys.exit(STARTUP_FAILURE)
        self._port = first.getsockname()[1]  # port 0: every worker on the one it got
        self._spare = [first]
        scheme = "https" if config.is_ssl else "http"
        shown = f"[{self._host}]" if self._family == socket.AF_INET6 else self._host
        log.info("Uvicorn running on %s://%s:%d (Press CTRL+C to quit); %d workers, a "
                 "socket each (SO_REUSEPORT)", scheme, shown, self._port, config.workers)
        super().__init__(config, sockets=[])

    # uvicorn's supervisor stores its sockets once and passes them to every `Process` it
    # makes; a property in their place gives each new worker a socket of its own.
    @property  # type: ignore[override]
    def sockets(self) -> list[socket.socket]:
        sock = self._spare.pop() if self._spare else self._bind()
        self._handed.append(sock)
        return [sock]

    @sockets.setter
    def sockets(self, _: list[socket.socket]) -> None:
        pass  # uvicorn's __init__ stores the shared sockets: there are none here

    # Every worker is started inside one of these three; when each returns, its workers
    # have started and hold their own descriptors.
    def init_processes(self) -> None:
        super().init_processes()
        self._close_handed()

    def handle_signals(self) -> None:
        super().handle_signals()
        self._close_handed()

    def keep_subprocess_alive(self) -> None:
        super().keep_subprocess_alive()
        self._close_handed()

    def run(self) -> None:
        try:
            super().run()
        except OSError as exc:  # no worker held the address, and something else took it
            log.error("cannot listen on %s:%d for a new worker: %s; stopping",
                      self._host, self._port, exc)
            self.terminate_all()
            self.join_all()
            raise SystemExit(1) from exc
        finally:
            self._close_handed()
            for sock in self._spare:
                sock.close()

    def _close_handed(self) -> None:
        for sock in self._handed:
            sock.close()
        self._handed.clear()

    def _bind(self) -> socket.socket:
        sock = socket.socket(self._family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            sock.bind((self._host, self._port))
        except OSError:
            sock.close()
            raise
        sock.set_inheritable(True)
        return sock
