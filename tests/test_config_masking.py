"""The contract's masking rule, as a pure function."""

from __future__ import annotations

import pytest

from callout_server.llm.masking import mask_api_key, vendor_prefix


@pytest.mark.parametrize(("key", "masked"), [
    ("gpustack_7f3a9c0d1e2b3a4f1a2", "gpustack_7f3a****f1a2"),
    ("sk-proj-AbCdEfGhIjKlMnOpWxYz", "sk-proj-AbCd****WxYz"),
    ("sk-AbCdEfGhIjKlMnOp1234", "sk-AbCd****1234"),
    ("ABCDEFGHIJKLMNOP", "ABCD****MNOP"),          # no vendor prefix
    ("0123456789ab", "0123****89ab"),              # exactly 12: masked, not hidden
    ("short-key01", "****"),                        # 11 chars
    ("sk-1", "****"),
])
def test_mask(key: str, masked: str) -> None:
    assert mask_api_key(key) == masked


def test_empty_key_masks_to_empty() -> None:
    assert mask_api_key("") == ""
    assert mask_api_key(None) == ""


@pytest.mark.parametrize(("key", "prefix"), [
    ("sk-abc", "sk-"), ("gpustack_x", "gpustack_"), ("sk-proj-X", "sk-proj-"),
    ("sk-ant-api03-XYZ", "sk-ant-api03-"), ("ABC-def", ""), ("7f3a_x", ""),
])
def test_vendor_prefix(key: str, prefix: str) -> None:
    assert vendor_prefix(key) == prefix


def test_long_prefix_never_reveals_the_key() -> None:
    # A lowercase key made only of "prefix-like" segments: the prefix is dropped rather
    # than letting prefix + 4 + 4 cover (almost) everything.
    key = "abc-def-ghi-jkl1"
    masked = mask_api_key(key)
    assert masked == "abc-****jkl1"
    hidden = len(key) - (len(masked) - 4)
    assert hidden >= 4


@pytest.mark.parametrize("n", range(12, 60))
def test_at_least_four_characters_always_hidden(n: int) -> None:
    for key in ("sk-" + "a" * (n - 3), "gpustack_" + "7" * max(n - 9, 0), "x" * n):
        if len(key) < 12:
            continue
        masked = mask_api_key(key)
        assert "****" in masked
        assert len(key) - (len(masked) - 4) >= 4


@pytest.mark.parametrize("key", [
    "e9b1c2d3-4f5a-4b6c-8d7e-9f0a1b2c3d4e",   # a UUID key (Ark, Azure): no prefix at all
    "abcd1234-ef56-ab78-cd90-ef1234567890",
    "sk-0123456789abcdef0123456789abcdef",   # DeepSeek-style: only `sk-`
    "ab3_cd4_ef5_gh6_ij7_kl8_mn9_op0",
])
def test_random_key_material_is_never_taken_for_a_prefix(key: str) -> None:
    masked = mask_api_key(key)
    shown = len(masked) - len("****")
    assert shown <= len(vendor_prefix(key)) + 8 and len(vendor_prefix(key)) <= 3
