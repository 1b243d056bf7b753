"""A request refused says exactly what is wrong, in words a dialer's developer acts on.

The setting to raise for a 413 is the one that applies to the route; a body sent without
`Content-Type: application/json` is told so (415), not "body should be a JSON object";
the Chat Completions tool shape gets a hint at the flat one; a blank utterance is refused
before any model is asked.
"""

from __future__ import annotations

from typing import Any

import httpx

from callout_server.config.settings import load_settings
from tests.fixtures.database import ADMIN_HEADERS, CONFIG_TOML, EN, SERVICE_HEADERS, ZH

DECIDE = "/api/nlu/decide"
NODE = {"call_id": "c-1", "node_id": "n", "intents": [{"name": "agree"}, {"name": "refuse"}],
        "fallback_intent": "refuse"}


async def test_an_nlu_413_names_nlu_max_body_bytes(app_client: httpx.AsyncClient) -> None:
    big = {**NODE, "utterance": "好" * 50_000}  # ~150 KB: over the NLU route's 128 KB
    for lang, words in ((EN, "[server] nlu_max_body_bytes"), (ZH, "[server] nlu_max_body_bytes")):
        r = await app_client.post(DECIDE, json=big, headers={**SERVICE_HEADERS, **lang})
        assert r.status_code == 413
        message = r.json()["error"]["message"]
        assert words in message and str(128 * 1024) in message, message
    # Streamed (no Content-Length): counted as it arrives, the same words.

    async def chunks() -> Any:
        for _ in range(5):
            yield b" " * 32 * 1024

    r = await app_client.post(DECIDE, content=chunks(), headers={
        **SERVICE_HEADERS, **EN, "Content-Type": "application/json"})
    assert r.status_code == 413 and "nlu_max_body_bytes" in r.json()["error"]["message"]
    # Other routes: max_body_bytes.
    r = await app_client.post("/api/admin/llm-configs", content=b"x" * (1024 * 1024 + 1),
                              headers={**ADMIN_HEADERS, **EN, "Content-Type": "application/json"})
    message = r.json()["error"]["message"]
    assert r.status_code == 413 and "[server] max_body_bytes" in message, message


def test_nlu_max_body_bytes_has_an_environment_variable() -> None:
    settings = load_settings(CONFIG_TOML, env={"CALLOUT_NLU_MAX_BODY_BYTES": "65536"})
    assert settings.server.nlu_max_body_bytes == 65536
    assert settings.server.body_limit_named("/api/nlu/decide") == (65536, "nlu_max_body_bytes")


def test_every_environment_variable_is_listed_in_the_configuration_doc() -> None:
    from callout_server.config.settings import ENV_OVERRIDES

    doc = (CONFIG_TOML.parent / "docs" / "configuration.md").read_text()
    assert [v for v in ENV_OVERRIDES if f"`{v}`" not in doc] == []


async def test_a_body_without_json_content_type_is_415_naming_the_header(
        app_client: httpx.AsyncClient) -> None:
    body = httpx.Request("POST", "http://t", json={**NODE, "utterance": "好的"}).content
    cases = (({}, "none", "无"), ({"Content-Type": "text/plain"}, "text/plain", "text/plain"),
             # curl -d without -H sends this one
             ({"Content-Type": "application/x-www-form-urlencoded"},
              "application/x-www-form-urlencoded", "application/x-www-form-urlencoded"))
    for headers, got_en, got_zh in cases:
        for lang, got in ((EN, got_en), (ZH, got_zh)):
            r = await app_client.post(DECIDE, content=body,
                                      headers={**SERVICE_HEADERS, **lang, **headers})
            assert r.status_code == 415, r.text
            err = r.json()["error"]
            assert err["code"] == "unsupported_media_type"
            assert "Content-Type: application/json" in err["message"], err
            assert got in err["message"], err
    r = await app_client.post(DECIDE, content=body, headers={**SERVICE_HEADERS, **EN})
    assert r.json()["error"]["message"] == (
        "send the body as JSON with Content-Type: application/json (received: none)")
    # The right header and the wrong JSON: still the 422 naming the body.
    r = await app_client.post(DECIDE, json=[1], headers={**SERVICE_HEADERS, **EN})
    assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "body"
    # application/*+json and a charset are JSON too.
    r = await app_client.post(DECIDE, content=body, headers={
        **SERVICE_HEADERS, "Content-Type": "application/json; charset=utf-8"})
    assert r.status_code != 415
    schema = (await app_client.get("/openapi.json")).json()
    assert "415" in schema["paths"][DECIDE]["post"]["responses"]


async def test_an_optional_body_without_json_content_type_is_415_too(
        app_client: httpx.AsyncClient) -> None:
    r = await app_client.post("/api/chat/sessions/c-9/cancel", content=b'{"turn_id": "t1"}',
                              headers={**SERVICE_HEADERS, **EN})
    assert r.status_code == 415, r.text
    r = await app_client.post("/api/chat/sessions/c-9/cancel", headers={**SERVICE_HEADERS, **EN})
    assert r.status_code != 415  # no body at all: nothing to say about its type


async def test_the_chat_completions_tool_shape_gets_a_hint_at_the_flat_one(
        app_client: httpx.AsyncClient) -> None:
    nested = {"type": "function", "function": {
        "name": "transfer", "description": "转人工", "parameters": {"type": "object"}}}
    for lang, hint in ((EN, "move name, description and parameters up"),
                       (ZH, "name、description、parameters 移到外层")):
        r = await app_client.post("/api/chat/sessions", headers={**SERVICE_HEADERS, **lang},
                                  json={"call_id": "c-tools", "tools": [nested]})
        assert r.status_code == 422, r.text
        (field,) = r.json()["error"]["fields"]  # one clear entry, not "name missing" + "extra"
        assert (field["field"], field["code"]) == ("tools.0", "tool_nested_shape")
        assert hint in field["message"], field
    flat = {"type": "function", **nested["function"]}
    r = await app_client.post("/api/chat/sessions", headers=SERVICE_HEADERS,
                              json={"call_id": "c-tools", "tools": [flat]})
    assert r.status_code == 201, r.text


async def test_a_blank_utterance_is_refused_naming_the_field(
        app_client: httpx.AsyncClient) -> None:
    """Silence is the dialer's no-input branch, not a decision: never sent to a model, and
    never a fallback that ops would count as a model failure."""
    for utterance in ("", "   ", "\n\t　"):
        for lang, words in ((EN, "the customer said nothing"), (ZH, "客户没有说话")):
            r = await app_client.post(DECIDE, json={**NODE, "utterance": utterance},
                                      headers={**SERVICE_HEADERS, **lang})
            assert r.status_code == 422, r.text
            (field,) = r.json()["error"]["fields"]
            assert (field["field"], field["code"]) == ("utterance", "utterance_blank")
            assert words in field["message"], field
    await app_client.services.recorder.flush()
    r = await app_client.get("/api/admin/diagnostics", headers=ADMIN_HEADERS)
    assert r.json()["items"] == []  # no model was called
