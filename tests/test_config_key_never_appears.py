"""A recognisable API key never leaves the worker except in the upstream request.

Drives every admin configuration route (success and error paths), the connectivity test
against the emulator, and checks every response body and header, the captured logs and
output, the snapshot's repr and the rows at rest. The auth and NLU packages extend this
with their own routes (`drive_*` helpers below are meant to be reused).
"""

from __future__ import annotations

import logging
import secrets
from urllib.parse import quote

import asyncpg
import httpx

from callout_server.llm.masking import MIN_RUN, secret_part
from tests.fixtures.app import free_port
from tests.fixtures.database import ADMIN_HEADERS, asyncpg_dsn, llm_config_body

URL = "/api/admin/llm-configs"
KEY = f"sk-proj-NEVERSHOWME{secrets.token_hex(12)}"
# The middle of the key: masking shows the prefix, 4 chars and the last 4, never this.
FRAGMENTS = (KEY, KEY[8:-4], KEY[12:24], "NEVERSHOWME")
SECRET = secret_part(KEY)
# A vendor echo of the key in the shapes scrubbing must catch: across the 300-character cut,
# only a prefix of it, URL-encoded in a URL, quoted.
ECHO = {"error": {"message": "x" * 290 + KEY + " | prefix " + KEY[:8 + 14]
                  + f" | url https://v.example/?key={quote(KEY + '/', safe='')} | '{KEY}'"}}


def leaks(text: str) -> list[str]:
    """Known fragments, and any run of MIN_RUN (10) characters of the key's secret part."""
    runs = {SECRET[i:i + MIN_RUN] for i in range(len(SECRET) - MIN_RUN + 1)}
    return [f for f in FRAGMENTS if f in text] + sorted(r for r in runs if r in text)


async def drive_admin_routes(client: httpx.AsyncClient, emulator) -> list[httpx.Response]:
    model = emulator.unique_model("qwen3-8b")
    echoing = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "pong"}, times=1)
    await emulator.script(echoing, {"status": 401, "error_body": ECHO}, times=1)
    out: list[httpx.Response] = []

    async def call(method: str, path: str, **kw) -> httpx.Response:
        r = await client.request(method, path, headers=ADMIN_HEADERS, **kw)
        out.append(r)
        return r

    created = (await call("POST", URL, json=llm_config_body(
        api_key=KEY, model=model, base_url=emulator.base_url("vllm")))).json()
    cid = created["id"]
    await call("POST", URL, json=llm_config_body(api_key=KEY, name=created["name"]))  # 409
    await call("POST", URL, json=llm_config_body(api_key=KEY, base_url="nope"))       # 422
    await call("POST", URL, json=llm_config_body(api_key=KEY, extra_params={"api_key": KEY,
                                                                             "model": "x"}))
    await call("POST", URL, json={"api_key": KEY})                                    # 422
    await call("GET", URL)
    await call("GET", f"{URL}/{cid}")
    await call("PUT", f"{URL}/{cid}", json={"version": 1, "api_key": created["api_key_masked"]})
    await call("PUT", f"{URL}/{cid}", json={"version": 1, "api_key": KEY})            # 409
    await call("PUT", f"{URL}/{cid}", json={"version": 2, "api_key": KEY, "timeout_s": -1})
    await call("PUT", f"{URL}/{cid}", json={"version": 2, "api_key": KEY + "0", "model": model})
    await call("PUT", f"{URL}/{cid}", json={"version": 3, "api_key": KEY})
    await call("PUT", f"{URL}/{cid}", json={"version": 3, "api_key": KEY[:20] + "\r\n" + KEY[20:]})
    await call("PUT", f"{URL}/{cid}", json={"version": 3, "api_key": created["api_key_masked"],
                                            "base_url": f"http://127.0.0.1:{free_port()}/v1"})
    await call("POST", f"{URL}/{cid}/activate")
    test_ok = await call("POST", f"{URL}/{cid}/test")
    dead = (await call("POST", URL, json=llm_config_body(
        api_key=KEY, base_url=f"http://127.0.0.1:{free_port()}/v1"))).json()
    test_fail = await call("POST", f"{URL}/{dead['id']}/test")
    echoed = (await call("POST", URL, json=llm_config_body(
        api_key=KEY, model=echoing, base_url=emulator.base_url("vllm")))).json()
    test_echo = await call("POST", f"{URL}/{echoed['id']}/test")
    await call("GET", f"{URL}/{cid}/revisions")
    await call("GET", "/api/admin/llm-active")
    await call("GET", f"{URL}/999999")
    await call("DELETE", f"{URL}/{dead['id']}")
    out.append(await client.get("/healthz"))
    out.append(await client.get(URL))  # 401, no credentials

    assert test_ok.status_code == 200 and test_ok.json()["ok"] is True, test_ok.text
    assert test_ok.json()["thinking_suppressed"] is True  # nlu: thinking off by default
    assert test_fail.json()["ok"] is False
    assert test_fail.json()["diagnostic"]["code"] == "connect_error"
    echo_diag = test_echo.json()["diagnostic"]
    assert echo_diag["status"] == 401 and len(echo_diag["detail"]) <= 200  # a short excerpt
    # A key did go upstream, where it belongs (the emulator records only its presence).
    sent = await emulator.requests(model)
    assert sent and sent[-1]["authorization_present"] is True
    return out


async def test_key_never_appears(app_client, emulator, pg_url, caplog, capsys) -> None:
    caplog.set_level(logging.DEBUG)
    responses = await drive_admin_routes(app_client, emulator)
    statuses = sorted({r.status_code for r in responses})
    assert statuses == [200, 201, 204, 401, 404, 409, 422]
    for r in responses:
        assert not leaks(r.text), (r.request.method, r.request.url, r.text)
        assert not leaks(str(r.headers))

    assert not leaks("\n".join(f"{rec.getMessage()} {rec.__dict__}" for rec in caplog.records))
    captured = capsys.readouterr()
    assert not leaks(captured.out + captured.err)
    assert not leaks(repr(app_client.services.store.current))

    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        rows = await conn.fetch("SELECT * FROM callout.ai_llm_configs")
        revisions = await conn.fetch("SELECT * FROM callout.ai_llm_config_revisions")
    finally:
        await conn.close()
    assert rows and revisions
    assert not leaks(str([dict(r) for r in rows]))
    assert not leaks(str([dict(r) for r in revisions]))
