"""Route dependencies the web layer gives every router: the worker's services, by type.

Who is calling is the auth package's concern (`callout_server.auth.deps`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from fastapi import Request

T = TypeVar("T")


def provide(cls: type[T]) -> Callable[[Request], Awaitable[T]]:
    """A route dependency that hands over the worker's one `cls` service.

    The composition root (`callout_server.services`) builds every service once and files it
    under its class in `app.state.components`; a router names the service it needs by type
    (`Annotated[NluService, Depends(provide(NluService))]`) and never sees the others.
    """

    async def dependency(request: Request) -> T:
        # async on purpose: FastAPI runs a plain `def` dependency in a worker thread, a thread
        # hop per request that cost the NLU route ~10% of its CPU (bench/bench_nlu.py).
        return request.app.state.components[cls]  # type: ignore[no-any-return]

    dependency.__name__ = f"provide_{cls.__name__}"
    return dependency
