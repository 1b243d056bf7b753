"""Helpers of the service-key tests (no tests here).

    key = await create_key(client, tiers=["nlu"], rpm=5)     # the 201 body (with `key`)
    bearer(key)                                              # its Authorization header
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.fixtures.database import ADMIN_HEADERS

KEYS = "/api/admin/service-keys"


def bearer(created: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {created['key']}"}


async def create_key(client: httpx.AsyncClient, base: str = "", **fields: Any) -> dict[str, Any]:
    body = {"name": "dialer-a", "tiers": ["nlu", "chat", "script"], **fields}
    r = await client.post(f"{base}{KEYS}", headers=ADMIN_HEADERS, json=body)
    assert r.status_code == 201, r.text
    return dict(r.json())
