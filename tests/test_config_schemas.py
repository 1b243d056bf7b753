"""Each invalid value is a 422 naming the field; nothing is stored."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.database import ADMIN_HEADERS, llm_config_body

URL = "/api/admin/llm-configs"

INVALID: list[tuple[str, Any]] = [
    ("tier", "vision"),
    ("tier", None),
    ("base_url", "not a url"),
    ("base_url", "ftp://host/v1"),
    ("base_url", "http://"),
    ("base_url", "gpustack.internal/v1"),
    ("timeout_s", -1),
    ("timeout_s", 0),
    ("timeout_s", 10_000),
    ("max_tokens", 0),
    ("max_tokens", -5),
    ("max_tokens", 200_001),
    ("temperature", -0.1),
    ("temperature", 2.5),
    ("api_style", "completions"),
    ("extra_params", {"model": "other"}),
    ("extra_params", {"messages": []}),
    ("extra_params", {"input": "x"}),
    ("extra_params", {"stream": True}),
    ("extra_params", "not-an-object"),
    ("name", ""),
    ("model", ""),
    ("reasoning_effort", "VERY HIGH"),
    ("is_active", "maybe"),
]


def _named(body: dict[str, Any], field: str) -> bool:
    error = body["error"]
    return (error["code"] == "validation_error" and field in error["message"]
            and any(f["field"] == field for f in error["fields"]))


@pytest.mark.parametrize(("field", "value"), INVALID)
async def test_create_rejects_invalid_value(app_client, field: str, value: Any) -> None:
    r = await app_client.post(URL, json=llm_config_body(**{field: value}), headers=ADMIN_HEADERS)
    assert r.status_code == 422, r.text
    assert _named(r.json(), field), r.json()
    assert (await app_client.get(URL, headers=ADMIN_HEADERS)).json()["items"] == []


async def test_unknown_field_is_named(app_client) -> None:
    r = await app_client.post(URL, json=llm_config_body(max_token=5), headers=ADMIN_HEADERS)
    assert r.status_code == 422
    assert _named(r.json(), "max_token")


@pytest.mark.parametrize(("field", "value"), [
    *INVALID[:2], ("base_url", "not a url"), ("timeout_s", -1), ("max_tokens", 0),
    ("api_style", "x"), ("extra_params", {"stream": False}), ("model", None),
    ("version", 0),
])
async def test_update_rejects_invalid_value(app_client, field: str, value: Any) -> None:
    created = (await app_client.post(URL, json=llm_config_body(), headers=ADMIN_HEADERS)).json()
    body = {"version": created["version"], field: value}
    r = await app_client.put(f"{URL}/{created['id']}", json=body, headers=ADMIN_HEADERS)
    assert r.status_code == 422, r.text
    assert _named(r.json(), field), r.json()
    after = (await app_client.get(f"{URL}/{created['id']}", headers=ADMIN_HEADERS)).json()
    assert after == created


async def test_base_url_is_normalised(app_client) -> None:
    r = await app_client.post(URL, json=llm_config_body(base_url=" https://h.example/v1/ "),
                              headers=ADMIN_HEADERS)
    assert r.status_code == 201
    assert r.json()["base_url"] == "https://h.example/v1"
