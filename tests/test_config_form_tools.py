"""What the configuration form asks the server before saving: test connection on the unsaved
values, and the models a base URL serves (`POST /api/admin/llm-configs/test`, `/models`).

The key never reaches the browser and never a host it was not given for: a stored key goes
only to its own origin, and the models route makes exactly one GET of `<base_url>/models`,
follows no redirect and answers model ids only, never the upstream's body.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from tests.fixtures.database import ADMIN_HEADERS, llm_config_body
from tests.fixtures.upstream import json_reply, status_reply

URL = "/api/admin/llm-configs"
KEY = "sk-formtools1234567890"


def draft(**fields: Any) -> dict[str, Any]:
    """The form's body: no `is_active`, and `api_key` only when one was typed."""
    body = llm_config_body(**fields)
    body.pop("is_active")
    if "api_key" not in fields:
        body.pop("api_key")
    return body


async def test_an_unsaved_form_is_tested_like_a_stored_configuration(app_client, emulator) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    await emulator.script(model, {"content": "好的"})
    r = await app_client.post(f"{URL}/test", headers=ADMIN_HEADERS, json=draft(
        name="", model=model, base_url=emulator.base_url("vllm"), api_key=KEY))
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["ok"] is True and got["model"] == model
    assert [c["name"] for c in got["checks"]] == ["reachable", "auth", "model", "thinking", "answer"]
    sent = (await emulator.requests(model))[-1]
    assert sent["authorization_present"] is True
    assert (await app_client.get(URL, headers=ADMIN_HEADERS)).json()["items"] == []  # nothing saved
    # The form is validated as saving would be: the field named.
    bad = await app_client.post(f"{URL}/test", headers=ADMIN_HEADERS, json=draft(base_url="ftp://x"))
    assert bad.status_code == 422 and [f["field"] for f in bad.json()["error"]["fields"]] == ["base_url"]


async def test_an_edit_uses_the_stored_key_only_on_its_own_host(app_client, emulator) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    home = emulator.base_url("vllm")
    stored = (await app_client.post(URL, headers=ADMIN_HEADERS, json=llm_config_body(
        model=model, base_url=home, api_key=KEY))).json()
    # Same host, another path: the stored key goes along (the form never had it).
    r = await app_client.post(f"{URL}/test", headers=ADMIN_HEADERS, json=draft(
        model=model, base_url=home.replace("/vllm/", "/vllm-noparser/"), config_id=stored["id"]))
    assert r.status_code == 200 and r.json()["ok"] is True, r.text
    assert (await emulator.requests(model))[-1]["authorization_present"] is True
    # Another host: refused before anything is sent, naming the key, as a save would be.
    n = len(await emulator.requests(model))
    for body in (draft(model=model, base_url="http://127.0.0.1:9/v1", config_id=stored["id"]),
                 draft(model=model, base_url=home, config_id=stored["id"],
                       endpoints=[{"base_url": "http://127.0.0.1:9/v1"}])):
        moved = await app_client.post(f"{URL}/test", headers=ADMIN_HEADERS, json=body)
        assert moved.status_code == 422 and moved.json()["error"]["code"] == "api_key_required"
        assert [f["field"] for f in moved.json()["error"]["fields"]] == ["api_key"]
    assert len(await emulator.requests(model)) == n
    models = await app_client.post(f"{URL}/models", headers=ADMIN_HEADERS, json={
        "base_url": "http://127.0.0.1:9/v1", "config_id": stored["id"]})
    assert models.status_code == 422 and models.json()["error"]["code"] == "api_key_required"
    # A key typed for the new host is that host's to use; "" sends none.
    typed = await app_client.post(f"{URL}/test", headers=ADMIN_HEADERS, json=draft(
        model=model, base_url=home, config_id=stored["id"], api_key=""))
    assert typed.status_code == 200
    assert (await emulator.requests(model))[-1]["authorization_present"] is False
    unknown = await app_client.post(f"{URL}/test", headers=ADMIN_HEADERS, json=draft(config_id=999999))
    assert unknown.status_code == 404


async def test_fetch_models_lists_what_the_base_url_serves(app_client, emulator) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    await emulator.script(model, {"content": "好的"})  # the emulator now serves it
    r = await app_client.post(f"{URL}/models", headers=ADMIN_HEADERS,
                              json={"base_url": emulator.base_url("vllm")})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["ok"] is True and model in got["models"] and "qwen3.5-2b" in got["models"]
    assert got["models"] == sorted(got["models"]) and got["latency_ms"] is not None
    dead = await app_client.post(f"{URL}/models", headers=ADMIN_HEADERS,
                                 json={"base_url": "http://127.0.0.1:9/v1"})
    assert dead.status_code == 200 and dead.json()["ok"] is False
    assert dead.json()["diagnostic"]["code"] == "connect_error"
    viewer = await app_client.post(f"{URL}/models", json={"base_url": emulator.base_url("vllm")})
    assert viewer.status_code == 401


async def test_fetch_models_reads_one_path_follows_no_redirect_echoes_no_body(app_client,
                                                                             upstream) -> None:
    upstream.reply = json_reply({"object": "list", "data": [{"id": "b"}, {"id": "a"}, {"x": 1}]})
    r = await app_client.post(f"{URL}/models", headers=ADMIN_HEADERS,
                              json={"base_url": upstream.base_url, "api_key": KEY})
    assert r.json() == {"ok": True, "models": ["a", "b"], "latency_ms": r.json()["latency_ms"],
                        "diagnostic": None, "reason": None}
    (seen,) = upstream.requests
    assert (seen.method, seen.path) == ("GET", "/v1/models")
    assert seen.headers["authorization"] == f"Bearer {KEY}"

    # An internal page is no model list: nothing of it comes back.
    upstream.requests.clear()
    upstream.reply = status_reply(200, "<html>secret admin page</html>")
    r = await app_client.post(f"{URL}/models", headers=ADMIN_HEADERS, json={"base_url": upstream.base_url})
    assert r.json()["ok"] is False and r.json()["reason"] == "not_a_model_list"
    assert "secret" not in r.text
    upstream.reply = status_reply(401, "bad key: sk-echoed")
    r = await app_client.post(f"{URL}/models", headers=ADMIN_HEADERS, json={"base_url": upstream.base_url})
    assert r.json()["diagnostic"]["code"] == "upstream_error" and r.json()["diagnostic"]["status"] == 401
    assert "sk-echoed" not in r.text

    async def redirect(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("http://169.254.169.254/latest/meta-data")

    upstream.requests.clear()
    upstream.reply = redirect
    r = await app_client.post(f"{URL}/models", headers=ADMIN_HEADERS, json={"base_url": upstream.base_url})
    assert r.json()["ok"] is False and r.json()["diagnostic"]["status"] == 302  # not followed
    assert len(upstream.requests) == 1
