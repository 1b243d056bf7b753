"""Cloud-metadata and link-local targets are refused, in every spelling, on every way in.

Saved through the admin API (422 naming the field, names resolved first), written in
config.toml (the start fails naming the key), already stored (the call and the test
connection end with a `connect_error` naming the address, nothing is sent), a name whose DNS
answer changed after it was saved (refused by the client's resolver at connection time), and
a redirect (never followed). `[server] allow_metadata_upstreams` lets a lab through. Names
are resolved by a test DNS: `socket.getaddrinfo` answers for `*.rebind.test`.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
from aiohttp import web

from callout_server.config.settings import ConfigFileError
from callout_server.llm import LLMCallError, LLMClient, LLMConfig, LLMRequest, TargetPolicy
from callout_server.llm.targets import literal_refusal
from tests.fixtures.database import ADMIN_HEADERS, asyncpg_dsn, llm_config_body
from tests.fixtures.upstream import Upstream, json_reply

URL = "/api/admin/llm-configs"
REQ = LLMRequest(messages=[{"role": "user", "content": "ping"}], default_thinking=False)

METADATA_SPELLINGS = [
    "http://169.254.169.254/latest/meta-data",
    "http://2852039166/v1",  # the same address as one integer
    "http://0xa9fea9fe/v1",
    "http://0XA9.0XFE.0XA9.0XFE/v1",
    "http://0251.0376.0251.0376/v1",  # octal
    "http://169.254.43518/v1",  # a.b.c
    "http://169.254.169.254./v1",  # trailing dot
    "http://[::ffff:169.254.169.254]/v1",
    "http://[::ffff:a9fe:a9fe]/v1",
    "http://[::169.254.169.254]/v1",  # IPv4-compatible
    "http://[64:ff9b::a9fe:a9fe]/v1",  # NAT64
    "http://[2002:a9fe:a9fe::]/v1",  # 6to4
    "http://①⑥⑨.254.169.254/v1",  # IDNA folds these digits
    "http://metadata.google.internal/computeMetadata/v1",
    "http://METADATA.GOOGLE.INTERNAL./v1",
    "http://metadata/v1",
    "http://100.100.100.200/latest/meta-data",  # Alibaba Cloud
    "http://169.254.0.23/v1",  # Tencent Cloud
    "http://[fd00:ec2::254]/latest/meta-data",  # AWS over IPv6
    "http://[fe80::1]:8000/v1",
    "http://[fe80::a:b%25eth0]/v1",
    "https://169.254.1.1:8443/v1",
]
ALLOWED = ["http://127.0.0.1:8900/v1", "http://10.0.0.5:8000/v1", "http://[::1]:8000/v1",
           "https://api.deepseek.com/v1", "http://169.255.0.1/v1", "http://100.100.100.201/v1",
           "http://gpu-02.internal/v1", "http://[fd00::1]/v1"]


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """`name.rebind.test` -> the address it resolves to (change it to move the name)."""
    table: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kw: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if isinstance(name, str) and name.rstrip(".").endswith(".rebind.test"):
            address = table[name.rstrip(".")]
            return real(address, port, *args, **kw)
        return real(host, port, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table


@pytest.mark.parametrize("url", METADATA_SPELLINGS)
def test_every_spelling_of_a_metadata_target_is_refused(url: str) -> None:
    refusal = literal_refusal(url)
    assert refusal is not None, url
    assert refusal.address in {"169.254.169.254", "metadata.google.internal", "metadata",
                               "100.100.100.200", "169.254.0.23", "fd00:ec2::254", "fe80::1",
                               "fe80::a:b", "169.254.1.1"}, refusal
    assert TargetPolicy(allow_metadata=True).literal(url) is None  # the lab's setting


@pytest.mark.parametrize("url", ALLOWED)
def test_ordinary_model_servers_are_not_refused(url: str) -> None:
    assert literal_refusal(url) is None


def _refused_field(r: Any, field: str) -> None:
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "validation_error" and field in error["message"]
    assert [(f["field"], f["code"]) for f in error["fields"]] == [(field, "url_blocked_target")]


@pytest.mark.parametrize("url", ["http://2852039166/v1", "http://[::ffff:169.254.169.254]/v1",
                                 "http://metadata.google.internal/v1"])
async def test_saving_a_metadata_target_is_a_422_naming_the_field(app_client, url: str) -> None:
    r = await app_client.post(URL, json=llm_config_body(base_url=url), headers=ADMIN_HEADERS)
    _refused_field(r, "base_url")
    assert "169.254.169.254" in r.text or "metadata.google.internal" in r.text
    r = await app_client.post(URL, headers=ADMIN_HEADERS, json=llm_config_body(
        endpoints=[{"base_url": "http://127.0.0.1:8901/v1"}, {"base_url": url}]))
    _refused_field(r, "endpoints.1.base_url")
    created = await app_client.post(URL, json=llm_config_body(), headers=ADMIN_HEADERS)
    assert created.status_code == 201, created.text
    cid = created.json()["id"]
    r = await app_client.put(f"{URL}/{cid}", json={"version": 1, "base_url": url},
                             headers=ADMIN_HEADERS | {"Accept-Language": "zh"})
    _refused_field(r, "base_url")
    assert "云元数据" in r.json()["error"]["message"]
    assert (await app_client.get(f"{URL}/{cid}", headers=ADMIN_HEADERS)).json()["version"] == 1
    assert len((await app_client.get(URL, headers=ADMIN_HEADERS)).json()["items"]) == 1


async def test_a_name_is_judged_by_what_it_resolves_to_when_saved(app_client, dns) -> None:
    dns["model.rebind.test"] = "169.254.169.254"
    r = await app_client.post(URL, headers=ADMIN_HEADERS, json=llm_config_body(
        base_url="http://model.rebind.test:8000/v1"))
    _refused_field(r, "base_url")
    dns["model.rebind.test"] = "127.0.0.1"
    r = await app_client.post(URL, headers=ADMIN_HEADERS, json=llm_config_body(
        base_url="http://model.rebind.test:8000/v1"))
    assert r.status_code == 201, r.text


async def test_a_name_that_moved_since_it_was_saved_is_refused_at_call_time(
        dns, upstream: Upstream) -> None:
    dns["model.rebind.test"] = "127.0.0.1"
    upstream.reply = json_reply({"choices": [{"message": {"content": "pong"},
                                              "finish_reason": "stop"}]})
    cfg = LLMConfig(tier="nlu", name="n", model="m",
                    base_url=f"http://model.rebind.test:{upstream.port}/v1")
    client = LLMClient(targets=TargetPolicy())
    try:
        assert (await client.complete(cfg, REQ)).text == "pong"
    finally:
        await client.aclose()
    dns["model.rebind.test"] = "169.254.169.254"  # DNS changed after the save
    for stream in (False, True):
        client = LLMClient(targets=TargetPolicy())  # a new worker: no pooled connection
        try:
            with pytest.raises(LLMCallError) as info:
                if stream:
                    async with client.stream(cfg, REQ) as s:
                        async for _ in s:
                            pass
                else:
                    await client.complete(cfg, REQ)
        finally:
            await client.aclose()
        d = info.value.diagnostic
        assert (d.code, d.reason) == ("connect_error", "blocked_target"), d
        assert d.args == {"host": "model.rebind.test", "address": "169.254.169.254"}
        assert "allow_metadata_upstreams" in d.message_in("en")
    assert len(upstream.requests) == 1  # the refused calls sent nothing anywhere


async def test_a_redirect_is_never_followed(upstream: Upstream) -> None:
    async def redirect(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("http://169.254.169.254/latest/meta-data/iam")

    upstream.reply = redirect
    cfg = LLMConfig(tier="nlu", name="n", model="m", base_url=upstream.base_url)
    client = LLMClient()
    try:
        with pytest.raises(LLMCallError) as info:
            await client.complete(cfg, REQ)
        d = info.value.diagnostic
        assert (d.code, d.status, d.reason) == ("upstream_error", 302, "redirect_not_followed")
        with pytest.raises(LLMCallError) as info:
            async with client.stream(cfg, REQ) as s:
                async for _ in s:
                    pass
        d = info.value.diagnostic
        assert (d.code, d.status, d.reason) == ("upstream_error", 302, "redirect_not_followed")
        assert "never followed" in d.message_in("en")
    finally:
        await client.aclose()
    assert len(upstream.requests) == 2  # one each, none to where it pointed


async def test_a_stored_metadata_target_is_refused_by_the_test_and_sends_nothing(
        app_client, pg_url: str) -> None:
    created = await app_client.post(URL, json=llm_config_body(), headers=ADMIN_HEADERS)
    cid = created.json()["id"]
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))  # saved by an older version
    try:
        await conn.execute("UPDATE callout.ai_llm_configs SET base_url = $1 WHERE id = $2",
                           "http://0xa9fea9fe/latest", cid)
    finally:
        await conn.close()
    r = await app_client.post(f"{URL}/{cid}/test", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    result = r.json()
    assert result["ok"] is False
    d = result["diagnostic"]
    assert d["code"] == "connect_error" and "169.254.169.254" in d["message"]
    assert result["checks"][0] | {"values": {}} == {
        "name": "reachable", "status": "fail", "code": "connect_error", "values": {}}


def test_config_toml_refuses_a_metadata_target_naming_the_key(
        make_settings: Callable[..., Any]) -> None:
    with pytest.raises(ConfigFileError, match=r"llm\.chat\.base_url") as info:
        make_settings(**{"llm.chat.base_url": "http://[::ffff:a9fe:a9fe]/v1"})
    assert "169.254.169.254" in str(info.value)
    with pytest.raises(ConfigFileError, match=r"llm\.nlu\.endpoints\.0\.base_url"):
        make_settings(**{"llm.nlu.endpoints": [{"base_url": "http://100.100.100.200/v1"}]})
    lab = make_settings(**{"llm.chat.base_url": "http://169.254.169.254/v1",
                           "server.allow_metadata_upstreams": True})
    assert lab.targets.allow_metadata is True


async def test_the_labs_setting_lets_it_through(make_settings, pg_url: str) -> None:
    from tests.fixtures.app import running_app
    from tests.fixtures.database import reset_tables

    await reset_tables(pg_url)
    settings = make_settings(**{"server.allow_metadata_upstreams": True})
    async with running_app(settings) as client:
        r = await client.post(URL, headers=ADMIN_HEADERS, json=llm_config_body(
            base_url="http://169.254.169.254/v1"))
        assert r.status_code == 201, r.text
