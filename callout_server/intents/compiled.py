"""The global intents a worker serves: one immutable value, its matcher built once per
reload (never per request).

    intents = compile_intents(items, version=3)
    intents.enabled            the enabled ones, in the list's order
    intents.rules.check(text)  the phrase rules over the enabled ones (None: none enabled)
    intents.action("opt_out")  -> "end_call"
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from callout_server.phrases import GlobalIntent, IntentRules


@dataclass(frozen=True, slots=True)
class CompiledIntents:
    items: tuple[GlobalIntent, ...]
    version: int  # 0: config.toml's defaults, never saved by an operator
    updated_by: str | None = None
    updated_at: datetime | None = None
    enabled: tuple[GlobalIntent, ...] = ()
    rules: IntentRules | None = None  # over the enabled intents; None when none is enabled
    actions: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def action(self, name: str) -> str | None:
        return self.actions.get(name)

    def view(self) -> dict[str, Any]:
        """The contract's list: `{"items": [...], "version"}` (and who saved it, when)."""
        return {"items": [{"name": i.name, "description": i.description,
                           "phrases": list(i.phrases), "action": i.action,
                           "enabled": i.enabled} for i in self.items],
                "version": self.version, "updated_by": self.updated_by,
                "updated_at": self.updated_at.isoformat().replace("+00:00", "Z")
                if self.updated_at else None}


def compile_intents(items: Iterable[GlobalIntent], *, version: int,
                    updated_by: str | None = None,
                    updated_at: datetime | None = None) -> CompiledIntents:
    """Raises ValueError for a list the rules cannot take (a name listed twice)."""
    items = tuple(items)
    enabled = tuple(i for i in items if i.enabled)
    rules = IntentRules([i.phrases_for_rules() for i in enabled]) if enabled else None
    return CompiledIntents(items, version, updated_by, updated_at, enabled, rules,
                           MappingProxyType({i.name: i.action for i in enabled}))
