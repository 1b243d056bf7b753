"""vLLM's `priority` request field, sent by tier where the configuration asks for it
(`send_priority`): stored on PostgreSQL, read from config.toml, in the body vLLM receives."""

from __future__ import annotations

from typing import Any

from callout_server.llm import LLMConfig, LLMRequest
from callout_server.llm.request_body import build_request
from tests.fixtures.database import ADMIN_HEADERS, llm_config_body
from tests.support.nlu import answer, decide, nlu_app

REQ = LLMRequest(messages=[{"role": "user", "content": "您好"}], default_thinking=False)


def _cfg(tier: str, url: str = "http://gpu-1.internal:8000/v1", **kw: Any) -> LLMConfig:
    return LLMConfig(tier=tier, name="c", base_url=url, model="qwen2.5-7b", vendor="vllm", **kw)


def test_the_tiers_priority_goes_to_vllm_only_when_asked() -> None:
    assert "priority" not in build_request(_cfg("nlu"), REQ, stream=False).body
    for tier, value in (("nlu", 0), ("chat", 1), ("script", 2)):
        for stream in (False, True):
            built = build_request(_cfg(tier, send_priority=True), REQ, stream=stream)
            assert built.body["priority"] == value
    # An explicit one in extra_params wins (the operator's own scheme).
    built = build_request(_cfg("script", send_priority=True, extra_params={"priority": -5}),
                          REQ, stream=False)
    assert built.body["priority"] == -5
    # A vendor with no such field gets none, and the note says why.
    other = LLMConfig(tier="nlu", name="c", base_url="https://api.deepseek.com/v1",
                      model="deepseek-chat", send_priority=True)
    built = build_request(other, REQ, stream=False)
    assert "priority" not in built.body
    assert any("send_priority" in n for n in built.notes)


async def test_send_priority_is_stored_and_reaches_the_emulator(make_settings: Any, pg_url: str,
                                                                emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree")})
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        r = await client.post("/api/admin/llm-configs", headers=ADMIN_HEADERS, json=llm_config_body(
            model=model, base_url=emulator.base_url("vllm"), vendor="vllm", send_priority=True,
            is_active=True))
        assert r.status_code == 201, r.text
        assert r.json()["send_priority"] is True
        cid = r.json()["id"]
        assert (await decide(client))[0].status_code == 200
        (seen,) = await emulator.requests(model)
        assert seen["body"]["priority"] == 0
        r = await client.put(f"/api/admin/llm-configs/{cid}", headers=ADMIN_HEADERS,
                               json={"version": r.json()["version"], "send_priority": "yes?"})
        assert r.status_code == 422 and "send_priority" in r.text
        shown = (await client.get(f"/api/admin/llm-configs/{cid}", headers=ADMIN_HEADERS)).json()
        assert shown["send_priority"] is True


async def test_config_toml_takes_it_too(make_settings: Any, pg_url: str, emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree")})
    async with nlu_app(make_settings, pg_url, emulator, model,
                       **{"llm.nlu.send_priority": True, "llm.nlu.vendor": "vllm"}) as client:
        assert (await decide(client))[0].status_code == 200
        (seen,) = await emulator.requests(model)
        assert seen["body"]["priority"] == 0
