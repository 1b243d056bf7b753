"""What a call is routed over, and what it reports back.

    Route(primary, fallbacks)     a configuration and, in order, those to fall back to
    Served(value, report)         a usable answer and the call's report (report.py)
    UpstreamError(LLMCallError)   no usable answer anywhere; its report names where it ended
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from callout_server.llm import LLMCallError, LLMConfig
from callout_server.upstream.report import CallReport

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Route:
    primary: LLMConfig
    fallbacks: tuple[LLMConfig, ...] = ()
    # Which side of a running canary the route is ("active" | "canary"; None: no canary),
    # copied onto every report of a call over it.
    variant: str | None = None

    @classmethod
    def of(cls, value: LLMConfig | Route) -> Route:
        return value if isinstance(value, Route) else cls(value)

    @property
    def chain(self) -> tuple[LLMConfig, ...]:
        return (self.primary, *self.fallbacks)


@dataclass(frozen=True, slots=True)
class Served(Generic[T]):
    """A usable answer; `report` says who gave it (a fallback's configuration, maybe)."""

    value: T
    report: CallReport

    @property
    def config(self) -> LLMConfig:
        return self.report.config

    @property
    def endpoint(self) -> str | None:  # the base URL, credentials masked
        return self.report.endpoint

    @property
    def attempts(self) -> int:  # requests sent for the call: 1 when nothing was retried
        return self.report.attempts


class UpstreamError(LLMCallError):
    """Every attempt failed (or the first failure was the request's own fault)."""

    def __init__(self, error: LLMCallError, report: CallReport) -> None:
        super().__init__(error.diagnostic, retry_after_s=error.retry_after_s)
        self.report = report

    @property
    def config(self) -> LLMConfig:
        return self.report.config

    @property
    def endpoint(self) -> str | None:
        return self.report.endpoint

    @property
    def attempts(self) -> int:
        return self.report.attempts
