"""Who a model call is made for: the service key and campaign the edge authenticated.

    token = CALLER.set(Caller(key_id=7, campaign="spring-a", spent=budget.add))
    ...                       # every record_call in this context carries key_id, campaign
    CALLER.reset(token)

The service-key gate (service_keys/gate.py) makes the caller current for the request, so
`record_call` stamps each record with it (a tier may pass `caller=` itself) and reports the
tokens the vendor counted to `spent` (the key's daily budget). A context variable: tasks a
request starts (a chat turn's stream) inherit it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass


def _nowhere(tokens: int) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Caller:
    key_id: int | None = None
    campaign: str | None = None
    # Told the vendor-reported tokens (prompt + completion, reasoning included) of each call.
    spent: Callable[[int], None] = _nowhere


CALLER: ContextVar[Caller | None] = ContextVar("callout_caller", default=None)
