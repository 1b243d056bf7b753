"""Request and answer shapes of `/api/admin/lexicons*` (the contract's "Speech guards")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from callout_server.i18n import invalid
from callout_server.phrases import fold
from callout_server.validation import INT4_MAX, RequestModel, check_json, check_text

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"
MAX_LEXICONS = 100  # names are a metrics label: the count is bounded
MAX_ENTRIES = 20_000  # terms, and allowed look-alikes, per lexicon
MAX_TERM_CHARS = 64
MAX_REPLACEMENT_CHARS = 500
MAX_LIST_BYTES = 900 * 1024  # a 20,000-term list fits the default 1 MB body
MAX_TRY_CHARS = 2000

Action = Literal["replace", "drop", "end_turn"]
Name = Annotated[str, Field(pattern=NAME_PATTERN)]
Entry = Annotated[str, Field(max_length=MAX_TERM_CHARS)]


def _entries(values: list[str]) -> list[str]:
    """Stripped, refused when one folds to nothing (it could never match), duplicates kept
    once in their first place."""
    if len(values) > MAX_ENTRIES:
        raise invalid("lexicon_terms_too_many", limit=MAX_ENTRIES)
    out: list[str] = []
    seen: set[str] = set()
    for i, value in enumerate(values):
        entry = value.strip()
        if not fold(entry):
            raise invalid("lexicon_term_empty", index=i)
        if entry not in seen:
            seen.add(entry)
            out.append(entry)
    return out


class LexiconIn(RequestModel):
    """`PUT /api/admin/lexicons/{name}`: the whole lexicon (created when absent)."""

    terms: list[Entry] = Field(min_length=1)
    allow: list[Entry] = Field(default_factory=list)
    action: Action
    replacement: str | None = Field(None, max_length=MAX_REPLACEMENT_CHARS,
                                    validate_default=True)
    version: int | None = Field(None, ge=1, le=INT4_MAX,
                                description="the version that was read (optimistic lock)")

    @field_validator("*", mode="after")
    @classmethod
    def _storable(cls, value: Any) -> Any:  # RequestModel's, with room for a long list
        if isinstance(value, str):
            return check_text(value)
        if isinstance(value, list):
            return check_json(value, max_bytes=MAX_LIST_BYTES)
        return value

    @field_validator("terms", "allow", mode="after")
    @classmethod
    def _clean_entries(cls, values: list[str]) -> list[str]:
        return _entries(values)

    @field_validator("replacement", mode="after")
    @classmethod
    def _replacement_for_replace(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = value.strip() if value is not None else None
        action = info.data.get("action")
        if action == "replace" and not value:
            raise invalid("lexicon_replacement_required")
        if action in ("drop", "end_turn") and value:
            raise invalid("lexicon_replacement_unused")
        return value or None


class LexiconOut(BaseModel):
    name: str
    terms: list[str]
    allow: list[str]
    action: Action
    replacement: str | None
    version: int
    created_at: datetime
    updated_at: datetime
    updated_by: str | None


class LexiconList(BaseModel):
    items: list[LexiconOut]


class TryRequest(RequestModel):
    """`POST /api/admin/lexicons/try`: what the guard would do with one sentence."""

    text: str = Field(min_length=1, max_length=MAX_TRY_CHARS)
    lexicons: list[Name] | None = Field(
        None, max_length=MAX_LEXICONS, description="the lexicons to check, in order "
        "(default: all of them, by name)")
    mask_pii: bool = False


class TryHit(BaseModel):
    lexicon: str
    action: Action
    term: str = Field(description="the term as the lexicon lists it")
    text: str = Field(description="what the sentence said: text[start:end]")
    start: int
    end: int


class TryResult(BaseModel):
    action: Literal["replace", "drop", "end_turn", "mask_pii"] | None = Field(
        description="what the guard does with the sentence (null: spoken as it is)")
    lexicon: str | None = None
    spoken: str | None = Field(description="what the caller would hear (null: nothing)")
    hits: list[TryHit] = Field(description="every hit of every lexicon checked")
