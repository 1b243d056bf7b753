"""`X-Forwarded-For` is believed only from a proxy the operator named (`--forwarded-allow-ips`).

uvicorn trusts it from 127.0.0.1 by default; a client on the same host (or behind a local
proxy that passes the header through) could then pick a fresh address for every guess and
never meet the login throttle.
"""

from __future__ import annotations

import httpx
import pytest

from callout_server import cli

pytestmark = pytest.mark.timeout(120)


async def _failed_logins(url: str, n: int) -> list[int]:
    codes = []
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        for i in range(n):
            r = await client.post("/api/auth/login", headers={"X-Forwarded-For": f"10.0.0.{i}"},
                                  json={"username": "admin", "password": "wrong-password"})
            codes.append(r.status_code)
    return codes


async def test_forwarded_for_is_ignored_by_default(start_worker) -> None:
    worker = await start_worker("default")
    codes = await _failed_logins(worker.url, 8)
    assert 429 in codes  # one client, however many addresses it claims


async def test_a_named_proxy_is_believed(start_worker) -> None:
    worker = await start_worker("proxied", CALLOUT_FORWARDED_ALLOW_IPS="127.0.0.1")
    codes = await _failed_logins(worker.url, 8)
    assert set(codes) == {401}  # each claimed address is a client of its own


def test_the_command_line_option_wins_over_the_setting(monkeypatch) -> None:
    seen: dict[str, object] = {}
    monkeypatch.setattr("uvicorn.run", lambda *a, **kw: seen.update(kw))
    monkeypatch.setenv("CALLOUT_FORWARDED_ALLOW_IPS", "10.1.2.3")
    cli.main(["serve", "--port", "1"])
    assert seen["proxy_headers"] is True and seen["forwarded_allow_ips"] == "10.1.2.3"
    cli.main(["serve", "--port", "1", "--forwarded-allow-ips", ""])
    assert seen["proxy_headers"] is False and seen["forwarded_allow_ips"] is None
