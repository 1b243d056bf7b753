"""What a call is routed over, and what it reports back.

    Route(primary, fallbacks)     a configuration and, in order, those to fall back to
    Served(value, config, endpoint, attempts)
    UpstreamError(LLMCallError)   no usable answer anywhere; names where the call ended
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from callout_server.llm import LLMCallError, LLMConfig

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Route:
    primary: LLMConfig
    fallbacks: tuple[LLMConfig, ...] = ()

    @classmethod
    def of(cls, value: LLMConfig | Route) -> Route:
        return value if isinstance(value, Route) else cls(value)

    @property
    def chain(self) -> tuple[LLMConfig, ...]:
        return (self.primary, *self.fallbacks)


@dataclass(frozen=True, slots=True)
class Served(Generic[T]):
    """A usable answer, from `config` (a fallback's when one answered) at `endpoint`."""

    value: T
    config: LLMConfig
    endpoint: str  # the base URL, credentials masked
    attempts: int  # requests sent for the call: 1 when nothing was retried or hedged


class UpstreamError(LLMCallError):
    """Every attempt failed (or the first failure was the request's own fault)."""

    def __init__(self, error: LLMCallError, config: LLMConfig, endpoint: str | None,
                 attempts: int) -> None:
        super().__init__(error.diagnostic, retry_after_s=error.retry_after_s)
        self.config = config
        self.endpoint = endpoint
        self.attempts = attempts
