"""What one test request tells about a configuration: separate checks, each with its verdict.

    judge(outcome, Probe(...)) -> Verdict(checks, diagnostic, thinking_suppressed)

A pure function over the client's answer (`Completion`) or failure (`Diagnostic`). Checks,
in the order they depend on each other (a failed one leaves the later ones `skipped`):

- `reachable`  the base URL answered as an API (fails on connect errors, timeouts, a 404
               that is not about the model: usually a base URL without `/v1`);
- `auth`       the key was accepted (fails on 401/403);
- `model`      the model name is served (fails on a 404 naming the model, or a 400 saying
               that the model does not exist);
- `thinking`   thinking suppressed as configured (warns when reasoning came back anyway);
- `answer`     the model produced an answer.

The test caps its own output (a few tokens when thinking is off) so that it costs nothing.
An answer cut at that cap says nothing about the configuration, so it is no finding: only
what the operator can act on becomes a warning and the result's `diagnostic`.
Checks carry codes and numbers, not sentences: the console words them in its language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from callout_server.llm import Completion, Diagnostic

Status = Literal["ok", "warn", "fail", "info", "skipped"]
CHECKS = ("reachable", "auth", "model", "thinking", "answer")

TRUNCATION = frozenset({"truncated", "truncated_by_reasoning"})
# The server answered, but the answer is not usable (the client raised).
UNUSABLE_ANSWER = TRUNCATION | {"empty_output"}


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: Status
    code: str
    values: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "code": self.code,
                "values": self.values}


@dataclass(frozen=True, slots=True)
class Probe:
    """How the test request was sent, next to the configuration it stands for."""

    model: str
    has_key: bool
    max_tokens: int       # the operator's budget
    test_max_tokens: int  # the test's own cap (at most the operator's)
    thinking: bool | None  # the switch sent: False = suppress, None = vendor default


@dataclass(frozen=True, slots=True)
class Verdict:
    checks: list[Check]
    diagnostic: Diagnostic | None  # the one finding the operator should act on, if any
    thinking_suppressed: bool | None

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)


def judge(outcome: Completion | Diagnostic, test: Probe) -> Verdict:
    if isinstance(outcome, Completion):
        return _answered(outcome, test)
    return _failed(outcome, test)


def _answered(done: Completion, test: Probe) -> Verdict:
    reasoning = _reasoning_seen(done.reasoning, done.usage.reasoning_tokens)
    thinking = _thinking(test, reasoning, done.usage.reasoning_tokens)
    answer, finding = _answer_with_text(done, test)
    served = done.model or test.model
    model = Check("model", "ok", "served" if served == test.model else "served_as",
                  {"configured": test.model, "served": served})
    checks = [_reachable_ok(), _auth_ok(test), model, thinking, answer]
    return Verdict(checks, finding, _suppressed(test, thinking))


def _failed(diag: Diagnostic, test: Probe) -> Verdict:
    code, status = diag.code, diag.status
    if code in ("connect_error", "timeout"):
        return _stop(test, Check("reachable", "fail", code, _numbers(diag)), diag)
    if code == "upstream_error" and status in (401, 403):
        auth = Check("auth", "fail", "rejected" if test.has_key else "missing",
                     {"status": status})
        return _stop(test, auth, diag)
    if code == "upstream_error" and status in (400, 404) and _names_model(diag):
        return _stop(test, Check("model", "fail", "not_found",
                                 {"configured": test.model, "status": status}), diag)
    if code == "upstream_error" and status == 404:
        return _stop(test, Check("reachable", "fail", "not_found", {"status": 404}), diag)
    if code in UNUSABLE_ANSWER:
        return _unusable(diag, test)
    # Anything else (a refused parameter, 429, 5xx, a vendor that gave up in-band).
    return _stop(test, Check("answer", "fail", code, _numbers(diag)), diag)


def _unusable(diag: Diagnostic, test: Probe) -> Verdict:
    """The server answered, but no usable text: at the test's own cap that is no finding."""
    # A truncation "by reasoning" while we did not ask for thinking means reasoning came back.
    reasoning = (bool(diag.reasoning_tokens)
                 or (diag.code == "truncated_by_reasoning" and test.thinking is not True))
    thinking = _thinking(test, reasoning, diag.reasoning_tokens)
    model = Check("model", "ok", "served", {"configured": test.model, "served": test.model})
    finding: Diagnostic | None = diag
    if diag.code in TRUNCATION and _cut_by_test_cap(test):
        code = "reasoning_used_test_cap" if diag.code == "truncated_by_reasoning" \
            else "cut_at_test_cap"
        answer = Check("answer", "info", code, _caps(test))
        finding = None
    else:
        answer = Check("answer", "fail", diag.code, _numbers(diag))
    checks = [_reachable_ok(), _auth_ok(test), model, thinking, answer]
    return Verdict(checks, finding, _suppressed(test, thinking))


def _answer_with_text(done: Completion, test: Probe) -> tuple[Check, Diagnostic | None]:
    diag = done.diagnostic
    values: dict[str, Any] = {"chars": len(done.text), **_caps(test)}
    if diag is None:
        return Check("answer", "ok", "answered", values), None
    if diag.code in TRUNCATION and _cut_by_test_cap(test):
        return Check("answer", "ok", "cut_at_test_cap", values), None
    return Check("answer", "warn", diag.code, {**values, **_numbers(diag)}), diag


def _thinking(test: Probe, reasoning: bool, reasoning_tokens: int | None) -> Check:
    values: dict[str, Any] = {"reasoning_seen": reasoning}
    if reasoning_tokens:
        values["reasoning_tokens"] = reasoning_tokens
    if test.thinking is False:
        return Check("thinking", "warn" if reasoning else "ok",
                     "not_suppressed" if reasoning else "suppressed", values)
    return Check("thinking", "info", "allowed" if test.thinking else "vendor_default", values)


def _suppressed(test: Probe, thinking: Check) -> bool | None:
    if test.thinking is None:
        return None
    return thinking.code == "suppressed"


def _stop(test: Probe, failed: Check, diag: Diagnostic) -> Verdict:
    """A failed check: the ones before it passed, the rest could not be told (no answer)."""
    passed = {"reachable": _reachable_ok(), "auth": _auth_ok(test),
              "model": Check("model", "ok", "accepted", {"configured": test.model})}
    checks: list[Check] = []
    for name in CHECKS:
        if name == failed.name:
            checks.append(failed)
        elif name in passed and CHECKS.index(name) < CHECKS.index(failed.name):
            checks.append(passed[name])
        else:
            checks.append(Check(name, "skipped", "not_run"))
    return Verdict(checks, diag, None)


def _reachable_ok() -> Check:
    return Check("reachable", "ok", "answered")


def _auth_ok(test: Probe) -> Check:
    return Check("auth", "ok", "accepted" if test.has_key else "not_required")


def _cut_by_test_cap(test: Probe) -> bool:
    return test.test_max_tokens < test.max_tokens


def _caps(test: Probe) -> dict[str, Any]:
    return {"test_max_tokens": test.test_max_tokens, "max_tokens": test.max_tokens}


def _reasoning_seen(text: str, tokens: int | None) -> bool:
    return bool(text.strip()) or bool(tokens)


# How vendors say a model name is unknown (OpenAI/vLLM/Ollama 404; DashScope, SiliconFlow,
# DeepSeek, Z.AI 400). A 400 that merely mentions the model ("temperature is not supported
# with this model") is a refused parameter, not a missing model.
_MISSING = ("not found", "not_found", "does not exist", "not exist", "unknown model",
            "invalid model", "no such model", "模型不存在")


def _names_model(diag: Diagnostic) -> bool:
    detail = (diag.detail or "").lower()
    if "model" not in detail and "模型" not in detail:
        return False
    return diag.status == 404 or any(word in detail for word in _MISSING)


def _numbers(diag: Diagnostic) -> dict[str, Any]:
    keep = ("status", "finish_reason", "max_tokens", "reasoning_tokens", "completion_tokens")
    return {k: getattr(diag, k) for k in keep if getattr(diag, k) is not None}
