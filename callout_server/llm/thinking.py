"""Thinking and reasoning-effort shaping: the rules the dialect rows cannot say alone.

One small function per `Dialect.control` value turns the effective thinking switch and the
requested `reasoning_effort` into body settings. Requests certain to fail are not sent as
asked: an effort value the vendor refuses, or an effort while thinking is off, is dropped
and explained in `Shaping.notes` (surfaced on `BuiltRequest.notes`), because a 400 on a live
call costs a customer's turn while a dropped hint only costs some reasoning quality.

Precedence: the thinking switch decides; `reasoning_effort` only refines it while thinking is
allowed (True, or None = vendor default). An OpenAI reasoning model has no off switch, so
"off" there means the lowest effort the model accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from callout_server.llm.config import LLMConfig
from callout_server.llm.dialects import Control, Dialect, Setting
from callout_server.llm.model_names import openai_model, template_key
from callout_server.llm.request import LLMRequest


@dataclass(frozen=True, slots=True)
class Shaping:
    settings: tuple[Setting, ...] = ()
    # What the vendor will do as far as we know: False = suppressed, True = allowed,
    # None = left to the vendor (nothing sent, or nothing that settles it).
    thinking: bool | None = None
    drop_temperature: bool = False  # reasoning models reject a non-default temperature
    notes: tuple[str, ...] = ()


def effective_thinking(cfg: LLMConfig, req: LLMRequest) -> bool | None:
    """The call's value, else the configuration's, else the caller's default (None: vendor's)."""
    if req.enable_thinking is not None:
        return req.enable_thinking
    if cfg.enable_thinking is not None:
        return cfg.enable_thinking
    return req.default_thinking


def requested_effort(cfg: LLMConfig, req: LLMRequest) -> str | None:
    """The call's reasoning_effort, else the configuration's; normalised, blank = unset."""
    for value in (req.reasoning_effort, cfg.reasoning_effort):
        if value is not None and value.strip():
            return value.strip().lower()
    return None


def shape_thinking(dialect: Dialect, cfg: LLMConfig, req: LLMRequest, *, stream: bool) -> Shaping:
    thinking = effective_thinking(cfg, req)
    effort = requested_effort(cfg, req)
    return _CONTROLS[dialect.control](dialect, cfg.model, thinking, effort, stream)


def _effort(
    dialect: Dialect, effort: str | None, thinking: bool | None, notes: list[str]
) -> Setting | None:
    """The generic effort rule: only while thinking is allowed, only accepted values."""
    if effort is None:
        return None
    if thinking is False:
        # DeepSeek: effort applies only in thinking mode (LiteLLM never sends it otherwise).
        notes.append(f"reasoning_effort {effort!r} dropped: thinking is off")
        return None
    if dialect.effort_path is None:
        notes.append(f"reasoning_effort {effort!r} dropped: {dialect.name} does not read it")
        return None
    if dialect.effort_values is not None and effort not in dialect.effort_values:
        accepted = ", ".join(dialect.effort_values)
        notes.append(f"reasoning_effort {effort!r} dropped: {dialect.name} accepts {accepted}")
        return None
    return Setting(dialect.effort_path, effort)


def _status(thinking: bool | None, *, sent: bool, default: bool | None) -> bool | None:
    if thinking is None:
        return None
    return thinking if sent or default == thinking else None


def _switch(
    d: Dialect, model: str, thinking: bool | None, effort: str | None, stream: bool
) -> Shaping:
    notes: list[str] = []
    if thinking is None and d.off_unless_streaming and not stream:
        thinking = False
        notes.append(f"{d.name}: thinking switched off for a non-streaming call")
    chosen = d.thinking_off if thinking is False else d.thinking_on if thinking else None
    settings = [s for s in (chosen, _effort(d, effort, thinking, notes)) if s is not None]
    status = _status(thinking, sent=bool(settings), default=d.default_thinking)
    return Shaping(tuple(settings), status, notes=tuple(notes))


def _no_switch(
    d: Dialect, model: str, thinking: bool | None, effort: str | None, stream: bool
) -> Shaping:
    notes: list[str] = []
    if thinking is not None and d.default_thinking != thinking:
        notes.append(f"{d.name}: no known thinking switch; set one in extra_params if needed")
    setting = _effort(d, effort, thinking, notes)
    settings = (setting,) if setting else ()
    status = _status(thinking, sent=False, default=d.default_thinking)
    return Shaping(settings, status, notes=tuple(notes))


def _chat_template(
    d: Dialect, model: str, thinking: bool | None, effort: str | None, stream: bool
) -> Shaping:
    # vLLM ignores unknown top-level keys silently, so the template kwarg is the switch that
    # works; its name depends on the model's chat template (Qwen3/GLM vs DeepSeek-V3.x).
    notes: list[str] = []
    settings: list[Setting] = []
    if thinking is not None:
        settings.append(Setting(f"chat_template_kwargs.{template_key(model)}", thinking))
    setting = _effort(d, effort, thinking, notes)
    if setting:
        settings.append(setting)
    return Shaping(tuple(settings), thinking, notes=tuple(notes))


def _openai(
    d: Dialect, model: str, thinking: bool | None, effort: str | None, stream: bool
) -> Shaping:
    row = openai_model(model)
    path = d.effort_path or "reasoning_effort"
    notes: list[str] = []
    if not row.reasoning:
        # gpt-4o/4.1 answer 400 to reasoning_effort; they never reason, so "off" holds.
        if effort is not None:
            notes.append(f"reasoning_effort {effort!r} dropped: not a reasoning model")
        return Shaping(thinking=False if thinking is False else None, notes=tuple(notes))
    settings: list[Setting] = []
    status = thinking
    if thinking is False:
        # The lowest accepted value: gpt-5 minimal, gpt-5.1+ none, o-series low.
        lowest = row.efforts[0] if len(row.efforts) >= 2 else None
        if lowest is not None:
            settings.append(Setting(path, lowest))
        else:  # gpt-5-pro (high only), o1-mini (no effort): reasoning cannot be reduced
            status = None
            notes.append("thinking cannot be reduced for this model; nothing sent")
        if effort is not None and effort != lowest:
            notes.append(f"reasoning_effort {effort!r} dropped: thinking is off")
    elif effort is not None:
        if effort in row.efforts:
            settings.append(Setting(path, effort))
        else:
            accepted = ", ".join(row.efforts) or "no value"
            notes.append(f"reasoning_effort {effort!r} dropped: this model accepts {accepted}")
    return Shaping(tuple(settings), status, drop_temperature=True, notes=tuple(notes))


_CONTROLS: dict[Control, Callable[[Dialect, str, bool | None, str | None, bool], Shaping]] = {
    "none": _no_switch,
    "switch": _switch,
    "chat_template": _chat_template,
    "openai": _openai,
}
