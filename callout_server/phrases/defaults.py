"""The default global intents shipped with the server (`data/global_intents.toml`).

    default_intents() -> (GlobalIntent(name="opt_out", action="end_call", ...), ...)
    IntentRules(i.phrases_for_rules() for i in default_intents())

The file has the shape of the console's list (name, description, action, enabled, phrases),
so the same rows can stand in `config.toml`; `parse_intents` reads either.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

from callout_server.phrases.intents import IntentPhrases

Action = Literal["end_call", "transfer", "flag"]
ACTIONS: tuple[Action, ...] = ("end_call", "transfer", "flag")


@dataclass(frozen=True, slots=True)
class GlobalIntent:
    name: str
    description: str
    action: Action
    enabled: bool
    phrases: tuple[str, ...]

    def phrases_for_rules(self) -> IntentPhrases:
        return IntentPhrases(self.name, self.phrases)


def parse_intents(rows: Iterable[Mapping[str, Any]]) -> tuple[GlobalIntent, ...]:
    """Rows as TOML or JSON give them; a row that is not a well-formed intent raises ValueError."""
    out = []
    for row in rows:
        name, action, phrases = row.get("name"), row.get("action"), row.get("phrases", [])
        if not isinstance(name, str) or not name:
            raise ValueError(f"global intent without a name: {row!r}")
        if action not in ACTIONS:
            raise ValueError(f"global intent {name!r}: action must be one of {ACTIONS}")
        if not isinstance(phrases, list) or not all(isinstance(p, str) for p in phrases):
            raise ValueError(f"global intent {name!r}: phrases must be a list of strings")
        out.append(GlobalIntent(name, str(row.get("description", "")), action,
                                bool(row.get("enabled", True)), tuple(phrases)))
    return tuple(out)


@cache
def default_intents() -> tuple[GlobalIntent, ...]:
    text = resources.files("callout_server.phrases").joinpath("data/global_intents.toml").read_text(
        encoding="utf-8")
    return parse_intents(tomllib.loads(text)["intents"])
