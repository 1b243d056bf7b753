"""Request and answer shapes of `/api/chat/sessions/*` (the contract's chat section)."""

from __future__ import annotations

import json
from typing import Any, Literal

import orjson
from pydantic import BaseModel, Field, field_validator, model_validator

from callout_server.i18n import invalid
from callout_server.tiers.chat.filler import FillerSpec
from callout_server.tiers.chat.guard import GuardSpec
from callout_server.tiers.overrides import Overrides
from callout_server.validation import INT4_MAX, RequestModel

_ID = r"^[A-Za-z0-9_\-.:@]{1,128}$"
# OpenAI's own rule for function names; vLLM and others accept the same set.
_FUNCTION_NAME = r"^[A-Za-z0-9_\-]{1,64}$"
MAX_TOOLS = 64
# All of a session's tools together, encoded: they are sent with every turn and held for
# the whole call, so a worker's memory is bounded in bytes, not only in sessions.
MAX_TOOLS_BYTES = 64 * 1024
MAX_OUTPUT_CHARS = 32_000

Output = Literal["audio", "text"]
EndReason = Literal["completed", "cancelled", "superseded", "timeout", "error", "guarded"]


class FunctionTool(RequestModel):
    """The flat OpenAI function-tool shape: `{"type": "function", "name", ...}`."""

    type: Literal["function"] = "function"
    name: str = Field(pattern=_FUNCTION_NAME)
    description: str | None = Field(None, max_length=2000)
    parameters: dict[str, Any] | None = None
    strict: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _flat_shape(cls, data: Any) -> Any:
        # The shape callers copy from Chat Completions: one hint, not "name missing" plus
        # "function not allowed".
        if isinstance(data, dict) and isinstance(data.get("function"), dict) and "name" not in data:
            raise invalid("tool_nested_shape")
        return data

    @field_validator("parameters")
    @classmethod
    def _json_schema_object(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        # Vendors reject anything but an object schema here, with a far vaguer message.
        if v is not None and v.get("type", "object") != "object":
            raise invalid("tool_parameters_object")
        return v

    def to_request(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class SessionCreate(RequestModel):
    call_id: str = Field(pattern=_ID)
    system_prompt: str = Field("", max_length=20_000)
    tools: list[FunctionTool] = Field(default_factory=list, max_length=MAX_TOOLS)
    history_turns: int = Field(10, ge=1, le=100)
    compact_history: bool = False
    # None: the server's `[chat] timeout_apology`; "" disables the apology for this session.
    timeout_apology: str | None = Field(None, max_length=200)
    overrides: Overrides = Field(default_factory=Overrides)
    guard: GuardSpec | None = None  # the speech guard (guard.py)
    filler: FillerSpec | None = None  # the hold phrase (filler.py)

    @field_validator("tools")
    @classmethod
    def _tools_bounded(cls, tools: list[FunctionTool]) -> list[FunctionTool]:
        names = [t.name for t in tools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise invalid("duplicate_functions", names=", ".join(dupes))
        if len(orjson.dumps([t.to_request() for t in tools])) > MAX_TOOLS_BYTES:
            raise invalid("json_too_large", kb=MAX_TOOLS_BYTES // 1024)
        return tools

    def footprint(self) -> int:
        """Bytes this session holds for the whole call besides its bounded history."""
        tools = orjson.dumps([t.to_request() for t in self.tools]) if self.tools else b""
        return len(self.system_prompt.encode()) + len(tools)


class TurnRequest(RequestModel):
    turn_id: str = Field(pattern=_ID)
    revision: int = Field(0, ge=0, le=INT4_MAX)
    text: str = Field(min_length=1, max_length=8000)
    output: Output = "audio"


class CancelRequest(RequestModel):
    turn_id: str | None = Field(None, pattern=_ID)


class ToolOutputRequest(RequestModel):
    call_id: str = Field(min_length=1, max_length=128)
    # A string goes to the model as is; any other JSON value is serialised.
    output: Any
    respond: bool = False

    @field_validator("output")
    @classmethod
    def _bounded(cls, v: Any) -> Any:
        if len(cls.as_text(v)) > MAX_OUTPUT_CHARS:
            raise invalid("output_too_long", limit=MAX_OUTPUT_CHARS)
        return v

    @staticmethod
    def as_text(value: Any) -> str:
        if isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False)

    def output_text(self) -> str:
        return self.as_text(self.output)


class SessionView(BaseModel):
    """A session as `POST /api/chat/sessions` (201) and `GET .../{call_id}` return it."""

    call_id: str
    in_response: bool
    turn_id: str | None = Field(description="the latest user turn")
    history_turns: int
    compact_history: bool
    tools: list[str] = Field(description="names of the session's function tools")
    pending_call_ids: list[str] = Field(description="tool calls still waiting for an output")
    summary: str | None = Field(description="compacted earlier part of the call, if any")
    history: list[dict[str, Any]] = Field(
        description="items, oldest first: user / assistant (with `interrupted`) / "
        "function_call (with `status`) / function_call_output, after a leading `summary`")
    idle_expires_in_s: float
    guard: GuardSpec | None = None
    filler: FillerSpec | None = None
