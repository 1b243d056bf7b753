"""A configuration's base URLs against the target policy, when it is saved (names resolved).

The admin API's schemas check the shape of a URL; whether it may be called at all depends
on where its name points now, which needs DNS, so it is checked here, before the write (no
lock is held while resolving). The client checks again at every connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from callout_server.config.errors import TargetRefused
from callout_server.llm import TargetPolicy


async def refuse_targets(policy: TargetPolicy, base_url: str | None,
                         endpoints: Iterable[Any] | None) -> None:
    """Raise `TargetRefused` naming the first refused field (`base_url`,
    `endpoints.N.base_url`); endpoints are pydantic models or their dicts."""
    urls: list[tuple[str, str]] = [("base_url", base_url)] if base_url else []
    for i, ep in enumerate(endpoints or ()):
        url = ep["base_url"] if isinstance(ep, dict) else ep.base_url
        urls.append((f"endpoints.{i}.base_url", url))
    found = await asyncio.gather(*(policy.refusal(url) for _, url in urls))
    for (field, _), refusal in zip(urls, found, strict=True):
        if refusal is not None:
            raise TargetRefused(field, refusal.address)
