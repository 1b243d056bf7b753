"""API keys at rest: Fernet with a version prefix, rotation, loud failure, never sent."""

from __future__ import annotations

import os
import stat

import asyncpg
import pytest

from callout_server.config.errors import ConfigUnusable
from callout_server.config.secrets import (
    SecretBox,
    SecretDecryptError,
    SecretKeyInvalid,
    load_or_create_key_file,
    secret_box_from_settings,
)
from tests.fixtures.database import (
    ADMIN_HEADERS,
    SECRET_KEY,
    SECRET_KEY_2,
    asyncpg_dsn,
    llm_config_body,
)

KEY = "sk-proj-SECRETsecret0123456789ZZZZ"


def test_roundtrip_and_format() -> None:
    box = SecretBox(SECRET_KEY)
    stored = box.encrypt(KEY)
    assert stored.startswith("v1:") and KEY not in stored
    assert box.encrypt(KEY) != stored  # random IV: equal keys do not look equal at rest
    assert box.decrypt(stored) == KEY


def test_rotation_two_keys() -> None:
    old = SecretBox(SECRET_KEY)
    stored_old = old.encrypt(KEY)
    rotating = SecretBox(f"{SECRET_KEY_2}, {SECRET_KEY}")   # new first, old still accepted
    assert rotating.decrypt(stored_old) == KEY
    stored_new = rotating.encrypt(KEY)
    with pytest.raises(SecretDecryptError):
        old.decrypt(stored_new)                              # written with the new key
    assert SecretBox(SECRET_KEY_2).decrypt(rotating.reencrypt(stored_old)) == KEY


def test_corrupt_or_foreign_ciphertext_fails_loudly_naming_the_config() -> None:
    box = SecretBox(SECRET_KEY)
    foreign = SecretBox(SECRET_KEY_2).encrypt(KEY)
    for bad in (foreign, "v1:garbage", "v9:abc", KEY):
        with pytest.raises(SecretDecryptError) as info:
            box.decrypt(bad, config_id=42)
        message = str(info.value)
        assert "42" in message and "CALLOUT_SECRET_KEY" in message
        assert SECRET_KEY not in message and KEY not in message


def test_sealer_binds_state_to_its_place_and_rotates() -> None:
    """Chat sessions in Redis: sealed under a purpose's subkey, opened only where sealed."""
    old = SecretBox(SECRET_KEY).sealer(b"purpose")
    sealed = old.seal("我的卡号".encode(), b"call-a/turns")
    assert "我的卡号".encode() not in sealed
    assert old.open(sealed, b"call-a/turns") == "我的卡号".encode()
    with pytest.raises(SecretDecryptError):  # another call's state passed off as this one's
        old.open(sealed, b"call-b/turns")
    with pytest.raises(SecretDecryptError):
        old.open(sealed[:-1] + bytes([sealed[-1] ^ 1]), b"call-a/turns")
    with pytest.raises(SecretDecryptError) as info:  # another purpose, another key
        SecretBox(SECRET_KEY).sealer(b"other", "chat session state").open(sealed, b"call-a/turns")
    message = str(info.value)  # names the state, not an API key it is not
    assert "chat session state" in message and "API key" not in message
    assert SECRET_KEY not in message
    rotated = SecretBox(f"{SECRET_KEY_2},{SECRET_KEY}").sealer(b"purpose")
    assert rotated.open(sealed, b"call-a/turns") == "我的卡号".encode()  # old key still opens
    with pytest.raises(SecretDecryptError):  # the new key seals: the old one alone cannot
        old.open(rotated.seal(b"x", b"call-a/turns"), b"call-a/turns")


def test_invalid_secret_key_is_refused_without_echo() -> None:
    with pytest.raises(SecretKeyInvalid) as info:
        SecretBox("my-passphrase")
    assert "my-passphrase" not in str(info.value)


def test_generated_key_file(tmp_path) -> None:
    path = tmp_path / "keys" / "callout.secret.key"
    key = load_or_create_key_file(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert load_or_create_key_file(path) == key  # stable across restarts / workers
    box = secret_box_from_settings("", "", str(tmp_path / "callout.db"))
    assert (tmp_path / "callout.secret.key").exists()
    assert box.decrypt(box.encrypt("x" * 20)) == "x" * 20


async def test_undecryptable_row_is_never_used(app_client, pg_url) -> None:
    client = app_client
    r = await client.post("/api/admin/llm-configs",
                          json=llm_config_body(api_key=KEY, is_active=True), headers=ADMIN_HEADERS)
    cid = r.json()["id"]
    # Simulate a row written under a key this worker no longer has.
    foreign = SecretBox(SECRET_KEY_2).encrypt(KEY)
    conn = await asyncpg.connect(asyncpg_dsn(pg_url))
    try:
        await conn.execute("UPDATE callout.ai_llm_configs SET api_key_enc=$1 WHERE id=$2",
                           foreign, cid)
    finally:
        await conn.close()
    await client.services.store.refresh()
    snap = client.services.store.current
    with pytest.raises(ConfigUnusable) as info:
        snap.config_for("nlu")
    assert str(cid) in info.value.message
    assert snap.tiers["nlu"].config.api_key == ""  # nothing to send, even by mistake

    active = (await client.get("/api/admin/llm-active", headers=ADMIN_HEADERS)).json()
    assert active["tiers"]["nlu"]["error"] and str(cid) in active["tiers"]["nlu"]["error"]
    got = (await client.get(f"/api/admin/llm-configs/{cid}", headers=ADMIN_HEADERS)).json()
    assert got["api_key_masked"] == "****" and got["has_api_key"] is True
    # The connectivity test refuses before any request leaves the worker.
    t = await client.post(f"/api/admin/llm-configs/{cid}/test", headers=ADMIN_HEADERS)
    assert t.status_code == 503 and t.json()["error"]["code"] == "config_unusable"
    assert str(cid) in t.json()["error"]["message"]
    # Saving a new key repairs it.
    fixed = await client.put(f"/api/admin/llm-configs/{cid}",
                             json={"version": got["version"], "api_key": KEY}, headers=ADMIN_HEADERS)
    assert fixed.status_code == 200
    assert client.services.store.current.config_for("nlu").api_key == KEY
