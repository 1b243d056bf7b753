"""What a key and a base URL may hold, checked on every way in (pure functions, config.toml,
LLMConfig built in code): a value the HTTP libraries cannot send is refused at the door, and
whatever still gets in ends as a diagnostic, never as an unhandled ValueError."""

from __future__ import annotations

import asyncio
import traceback
from typing import Any

import pytest

from callout_server.config.settings import ConfigFileError, load_settings
from callout_server.llm import LLMCallError, LLMClient, LLMConfig, LLMRequest
from callout_server.llm.credentials import (
    check_api_key,
    has_url_credentials,
    same_origin,
    unsendable,
)
from tests.fixtures.database import CONFIG_TOML

SECRET = "sk-live-Zq8Wm3Xc7Vb2Nn5Kp1Lr9Ts4"
BAD_KEYS = {
    "CR LF": f"{SECRET}\r\nX-Injected: 1",
    "LF": f"{SECRET[:10]}\n{SECRET[10:]}",
    "NUL": f"{SECRET}\x00",
    "DEL": f"{SECRET}\x7f",
    "tab": f"{SECRET[:10]}\t{SECRET[10:]}",
    "space": f"Bearer {SECRET}",
    "non-ASCII": f"{SECRET}é",
    "full-width": f"{SECRET}＿x",
}
GOOD_KEYS = [SECRET, "gpustack_7f3a9c0d1e2b3a4f1a2", "e9b1c2d3-4f5a-4b6c-8d7e-9f0a1b2c3d4e",
             "sk-ant-api03-AbC_dEf-123", "AKID:secret/with+base64==", "x"]
CRED_URLS = ["http://user:pass@host/v1", "https://token@host:8443/v1", "http://@host/v1",
             "HTTP://u:p@host/v1"]
PLAIN_URLS = ["http://host/v1", "https://host:8443/v1", "http://host/v1/a@b", "http://[::1]:80/v1"]


@pytest.mark.parametrize("name", sorted(BAD_KEYS))
def test_unsendable_key_is_refused_without_echoing_it(name: str) -> None:
    with pytest.raises(ValueError) as info:
        check_api_key(BAD_KEYS[name])
    assert SECRET[:10] not in str(info.value)
    assert unsendable(BAD_KEYS[name], "http://host/v1") is not None


@pytest.mark.parametrize("key", GOOD_KEYS)
def test_ordinary_keys_pass(key: str) -> None:
    assert check_api_key(key) == key
    assert unsendable(key, "http://host/v1") is None


@pytest.mark.parametrize("url", CRED_URLS)
def test_url_credentials_are_found(url: str) -> None:
    assert has_url_credentials(url)
    assert unsendable("", url) is not None


@pytest.mark.parametrize("url", PLAIN_URLS)
def test_plain_urls_pass(url: str) -> None:
    assert not has_url_credentials(url)
    assert unsendable("", url) is None


@pytest.mark.parametrize(("a", "b", "same"), [
    ("http://h/v1", "http://h/v2", True),            # the path is not the origin
    ("http://h/v1", "http://H:80/v1", True),         # default port, host case
    ("https://h/v1", "https://h:443/x", True),
    ("http://h/v1", "https://h/v1", False),          # scheme
    ("http://h/v1", "http://h:8080/v1", False),      # port
    ("http://h/v1", "http://h2/v1", False),          # host
    ("http://127.0.0.1/v1", "http://localhost/v1", False),
    ("http://u:p@h/v1", "http://h/v1", True),        # credentials are not the origin
    ("http://h:99999/v1", "http://h:99999/v1", False),  # unparseable: never "same"
])
def test_same_origin(a: str, b: str, same: bool) -> None:
    assert same_origin(a, b) is same


# -- config.toml -----------------------------------------------------------------------------


def _load(**overrides: Any) -> Any:
    return load_settings(CONFIG_TOML, env={}, overrides=overrides)


@pytest.mark.parametrize("name", sorted(BAD_KEYS))
def test_config_toml_refuses_an_unsendable_key_naming_it(name: str) -> None:
    with pytest.raises(ConfigFileError) as info:
        _load(**{"llm.chat.api_key": BAD_KEYS[name]})
    rendered = "".join(traceback.format_exception(info.value))
    assert "llm.chat.api_key" in str(info.value)
    assert SECRET[:10] not in rendered and SECRET[-10:] not in rendered


def test_config_toml_refuses_base_url_credentials_naming_the_key() -> None:
    url = "http://bob:" + "hunter2" + "secret@host/v1"  # not literal: tracebacks quote source
    with pytest.raises(ConfigFileError) as info:
        _load(**{"llm.script.base_url": url})
    rendered = "".join(traceback.format_exception(info.value))
    assert "llm.script.base_url" in str(info.value) and "hunter2" not in rendered


def test_config_toml_key_is_stripped_like_the_api_does() -> None:
    settings = _load(**{"llm.nlu.api_key": f"  {SECRET}\n"})  # a key file read into ${VAR}
    assert settings.file_llm_configs["nlu"].api_key == SECRET


def test_other_settings_errors_do_not_quote_values_either() -> None:
    with pytest.raises(ConfigFileError) as info:
        _load(**{"auth.admin_password": ["not", "a", "string", "hunter2"]})
    assert "auth.admin_password" in str(info.value) and "hunter2" not in str(info.value)


def test_config_repr_masks_base_url_credentials() -> None:
    cfg = LLMConfig(tier="nlu", name="x", base_url="http://bob:hunter2@h/v1", model="m",
                    api_key=SECRET)
    assert "hunter2" not in repr(cfg) and SECRET not in repr(cfg)
    assert "http://****@h/v1" in repr(cfg)


# -- the client: what still gets in is a diagnostic -----------------------------------------

REQ = LLMRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=8)


async def _outcome(client: LLMClient, cfg: LLMConfig, stream: bool) -> LLMCallError:
    with pytest.raises(LLMCallError) as info:
        if stream:
            async with client.stream(cfg, REQ) as s:
                async for _ in s:
                    pass
        else:
            await client.complete(cfg, REQ)
    return info.value


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize(("key", "url"), [
    *[(k, "http://127.0.0.1:9/v1") for k in BAD_KEYS.values()],
    ("", "http://bob:hunter2@127.0.0.1:9/v1"),
    (SECRET, "http://bob:hunter2@127.0.0.1:9/v1"),
], ids=[*BAD_KEYS, "url-credentials", "url-credentials-and-key"])
async def test_unsendable_config_is_a_connect_error(key: str, url: str, stream: bool) -> None:
    client = LLMClient()  # port 9 (discard): nothing listens, nothing may be sent
    cfg = LLMConfig(tier="chat", name="x", base_url=url, model="m", api_key=key, timeout_s=5)
    try:
        err = await _outcome(client, cfg, stream)
    finally:
        await client.aclose()
    assert err.code == "connect_error"
    rendered = "".join(traceback.format_exception(err)) + repr(err.diagnostic.to_dict())
    assert SECRET[:10] not in rendered and "hunter2" not in rendered


@pytest.mark.parametrize(("key", "stream"), [
    (BAD_KEYS["CR LF"], False), (BAD_KEYS["CR LF"], True), (BAD_KEYS["NUL"], False),
    (BAD_KEYS["non-ASCII"], True),  # httpx refuses it; aiohttp alone would send UTF-8
], ids=["crlf-complete", "crlf-stream", "nul-complete", "non-ascii-stream"])
async def test_a_header_the_library_refuses_is_a_connect_error(monkeypatch, key: str,
                                                               stream: bool) -> None:
    # The net behind the check: should a value pass it that the library still refuses, the
    # library's ValueError (whose text may quote the header) never escapes the client.
    monkeypatch.setattr("callout_server.llm.transport.unsendable", lambda *_: None)
    received: list[bytes] = []

    async def upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.read(65536))
        writer.close()

    server = await asyncio.start_server(upstream, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = LLMClient()
    cfg = LLMConfig(tier="script", name="x", base_url=f"http://127.0.0.1:{port}/v1", model="m",
                    api_key=key, timeout_s=5)
    try:
        err = await _outcome(client, cfg, stream)
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()
    assert err.code == "connect_error", err
    assert not any(b"X-Injected" in r for r in received)  # no header was split
    assert err.__cause__ is None and err.__suppress_context__
    assert SECRET[:10] not in "".join(traceback.format_exception(err))
