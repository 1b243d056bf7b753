"""`scrub`, the one pure function every vendor text passes through before it leaves the client,
and `call_error`, the one place that applies it (scrub first, cut after)."""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

import pytest

from callout_server.llm.masking import MIN_RUN, mask_url, scrub, secret_part
from callout_server.llm.transport import (
    EXCERPT_LIMIT,
    call_error,
    inband_error,
    status_error,
    vendor_error_message,
)

KEY = "sk-proj-Q7fZ2mK9xW4pL8vR1tY6nB3cD5hJ0gS"
SECRET = KEY[len("sk-proj-"):]


def longest_leak(text: str, secret: str = SECRET) -> int:
    """Length of the longest run of `secret`'s characters (contiguous) found in `text`."""
    best = 0
    for i in range(len(secret)):
        for j in range(i + best + 1, len(secret) + 1):
            if secret[i:j] in text:
                best = j - i
            else:
                break
    return best


def test_secret_part_is_the_key_beyond_its_vendor_prefix() -> None:
    assert secret_part(KEY) == SECRET
    assert secret_part("gpustack_7f3a9c0d1e2b") == "7f3a9c0d1e2b"
    assert secret_part("e9b1c2d3-4f5a-4b6c") == "e9b1c2d3-4f5a-4b6c"  # no prefix
    assert secret_part("sk-") == "sk-"  # nothing beyond the prefix: all of it


def test_whole_key_is_replaced_and_the_prefix_kept() -> None:
    assert scrub(f"Incorrect API key provided: {KEY}.", KEY) == \
        "Incorrect API key provided: sk-proj-****."


@pytest.mark.parametrize("cut", [MIN_RUN, 12, 20, len(SECRET) - 1])
def test_prefix_only_echo_is_scrubbed(cut: int) -> None:
    # Vendors that "mask" by showing only the start still show far too much.
    text = f"invalid key {KEY[:8 + cut]}..."
    out = scrub(text, KEY)
    assert longest_leak(out) < MIN_RUN, out
    assert out == "invalid key sk-proj-****..."


def test_suffix_and_middle_runs_are_scrubbed() -> None:
    text = f"key ending {SECRET[-12:]}, middle {SECRET[5:17]}"
    assert scrub(text, KEY) == "key ending ****, middle ****"


def test_runs_shorter_than_ten_stay() -> None:
    # Nine characters of a key are not a leak; scrubbing them would garble ordinary words.
    text = f"id {SECRET[:9]} ok"
    assert scrub(text, KEY) == text


@pytest.mark.parametrize("wrap", [
    lambda k: f'"{k}"', lambda k: f"'{k}'", lambda k: f"`{k}`", lambda k: f"<{k}>",
    lambda k: f"Bearer {k}", lambda k: f"api_key={k}&x=1", lambda k: json.dumps({"key": k}),
])
def test_quoted_or_embedded_key(wrap) -> None:
    out = scrub(f"echo: {wrap(KEY)}", KEY)
    assert longest_leak(out) < MIN_RUN, out
    assert "****" in out


SPECIAL = "sk-9f/Ab+cD=eF\"gH\\iJ/kL+mN=oP"


@pytest.mark.parametrize("encode", [
    lambda k: quote(k, safe=""), quote, quote_plus,
    lambda k: json.dumps(k)[1:-1], lambda k: json.dumps(k)[1:-1].replace("/", "\\/"),
])
def test_encoded_echoes_are_scrubbed(encode) -> None:
    secret = secret_part(SPECIAL)
    echoed = f"GET /v1/models?key={encode(SPECIAL)} failed"
    out = scrub(echoed, SPECIAL)
    assert longest_leak(out, secret) < MIN_RUN, out
    assert longest_leak(out, encode(secret)) < MIN_RUN, out


def test_repeated_and_overlapping_occurrences() -> None:
    text = f"{KEY} and again {KEY}{KEY} and {SECRET[:15]}"
    out = scrub(text, KEY)
    assert longest_leak(out) < MIN_RUN
    assert out == "sk-proj-**** and again sk-proj-****sk-proj-**** and ****"


@pytest.mark.parametrize("key", ["EMPTY", "abc123", "sk-abc", "token-12"])
def test_keys_shorter_than_ten_are_scrubbed_as_whole_words(key: str) -> None:
    secret = secret_part(key)
    out = scrub(f"bad key {key}; bad key again: {key}.", key)
    assert secret not in out
    assert out.count("****") == 2
    # ... but not inside a longer word: a dummy key must not garble every message.
    word = f"x{secret}y"
    assert scrub(f"see {word}", key) == f"see {word}"


def test_no_key_only_masks_url_credentials() -> None:
    assert scrub("plain text", "") == "plain text"
    assert scrub("GET http://bob:hunter2@h:8080/v1 refused", "") == \
        "GET http://****@h:8080/v1 refused"


@pytest.mark.parametrize(("url", "masked"), [
    ("http://user:pass@host/v1", "http://****@host/v1"),
    ("https://token@host:8443/v1", "https://****@host:8443/v1"),
    ("http://a@b@host/v1", "http://****@host/v1"),  # every "@" of the userinfo
    ("http://host/v1", "http://host/v1"),
    ("http://host/v1?mail=a@b.c", "http://host/v1?mail=a@b.c"),  # not userinfo
])
def test_mask_url(url: str, masked: str) -> None:
    assert mask_url(url) == masked
    assert mask_url(masked) == masked  # idempotent: masking a masked URL changes nothing


def test_scrub_is_pure_and_idempotent() -> None:
    text = f"x {KEY} y http://u:p@h/"
    once = scrub(text, KEY)
    assert scrub(once, KEY) == once
    assert text == f"x {KEY} y http://u:p@h/"


# -- call_error: scrub first, then cut ---------------------------------------------------------


@pytest.mark.parametrize("at", range(280, 305))
def test_key_across_the_cut_leaves_nothing(at: int) -> None:
    # The key starts so that a cut at 300 (the detail limit) would fall inside it.
    detail = "x" * at + KEY + " tail"
    d = call_error("upstream_error", "en", KEY, detail=detail).diagnostic
    assert d.detail is not None and len(d.detail) <= 300
    assert longest_leak(d.detail) < MIN_RUN and longest_leak(d.message) < MIN_RUN


def test_vendor_body_excerpt_is_short_and_scrubbed() -> None:
    body = json.dumps({"error": {"message": "y" * 190 + KEY + "z" * 5000}}).encode()
    d = status_error(401, body, "en", KEY).diagnostic
    assert d.detail is not None and len(d.detail) <= EXCERPT_LIMIT
    assert longest_leak(d.detail) < MIN_RUN
    assert d.detail.startswith("y" * 190)


def test_vendor_error_message_is_not_cut_before_scrubbing() -> None:
    message = "a" * 500 + KEY
    assert vendor_error_message(json.dumps({"error": message}).encode()) == message


def test_inband_error_is_an_excerpt_too() -> None:
    d = inband_error("e" * 199 + KEY, "zh", KEY).diagnostic
    assert d.code == "upstream_error" and d.status == 200
    assert len(d.detail or "") <= EXCERPT_LIMIT and longest_leak(d.detail or "") < MIN_RUN


def test_huge_text_is_bounded_and_still_clean() -> None:
    detail = (KEY + " ") * 20_000
    d = call_error("upstream_error", "en", KEY, detail=detail).diagnostic
    assert longest_leak(d.detail or "") < MIN_RUN
    rest = (d.detail or "").replace("sk-proj-**** ", "")
    assert "sk-proj-****".startswith(rest), rest  # only masked keys, the last one cut
