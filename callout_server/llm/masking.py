"""What a secret looks like on its way out: the contract's masking rule and scrubbing.

    mask_api_key("gpustack_7f3a9c...f1a2")   -> "gpustack_7f3a****f1a2"
    mask_api_key("sk-proj-AbCd...WxYz")      -> "sk-proj-AbCd****WxYz"
    mask_api_key(shorter than 12 chars)      -> "****"
    mask_url("http://user:pw@host/v1")       -> "http://****@host/v1"
    scrub(vendor_text, key)                  -> vendor_text without the key or URL credentials

A vendor prefix is a run of up to three short word segments at the start: letters, perhaps a
two-digit version, then `-` or `_` (`sk-`, `sk-proj-`, `gpustack_`, `sk-ant-api03-`), at most
16 characters. Key material does not look like that (a hex or UUID key has digits inside its
segments), so random characters are never shown as "prefix". The prefix is kept only while
at least four characters stay hidden besides the 4 + 4 shown.

All pure functions: no I/O, no state, their own tests (tests/test_config_masking.py,
tests/test_scrub.py).
"""

from __future__ import annotations

import re
from urllib.parse import quote, quote_plus

MASK = "****"
MIN_MASKABLE = 12
# A run of this many characters of a key's secret part is a leak wherever it appears.
MIN_RUN = 10
_PREFIX = re.compile(r"^(?:[a-z]{2,10}(?:\d{2})?[-_]){1,3}")
_PREFIX_MAX = 16
_SHOWN = 4
_HIDDEN_MIN = 4
# scheme://userinfo@ — greedy up to the last "@" before the path, so "a@b@host" hides both.
_URL_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#]*@")
_WORD = "A-Za-z0-9"


def vendor_prefix(key: str) -> str:
    m = _PREFIX.match(key)
    return m.group(0) if m and len(m.group(0)) <= _PREFIX_MAX else ""


def mask_api_key(key: str | None) -> str:
    """The masked form shown on every way out; `""` for no key."""
    if not key:
        return ""
    if len(key) < MIN_MASKABLE:
        return MASK
    prefix = vendor_prefix(key)
    if len(key) - len(prefix) < 2 * _SHOWN + _HIDDEN_MIN:
        prefix = ""
    body = key[len(prefix):]
    return f"{prefix}{body[:_SHOWN]}{MASK}{body[-_SHOWN:]}"


def mask_url(url: str) -> str:
    """`url` with any `user:password@` replaced by `****@` (credentials are secrets too)."""
    return _URL_USERINFO.sub(rf"\1{MASK}@", url)


def secret_part(key: str) -> str:
    """The part of a key that must never be shown: all of it but its vendor prefix."""
    return key[len(vendor_prefix(key)):] or key


def scrub(text: str, key: str) -> str:
    """`text` with every trace of `key` replaced by `****`, and URL credentials masked.

    Run this on the whole text *before* cutting it to length: a cut could otherwise split
    a key so that part of it survives. What counts as a trace:
      - any run of `MIN_RUN` (10) or more characters of the key's secret part, wherever it
        stands: the whole key, a prefix-only or suffix-only echo, a key split by a cut;
      - the same in the forms vendors and proxies echo a key in: URL-encoded, `+` for
        space, JSON-escaped (`\\"`, `\\\\`, `\\/`);
      - a secret part shorter than 10 characters: each whole occurrence that is not part
        of a longer word (a short dummy key such as `EMPTY` must not garble every message).
    The vendor prefix (`sk-proj-`) stays, as masking shows it anyway.
    """
    if key:
        secret = secret_part(key)
        for form in _forms(secret):
            text = _scrub_runs(text, form) if len(form) >= MIN_RUN else _scrub_word(text, form)
    return mask_url(text) if "@" in text else text


def _forms(secret: str) -> list[str]:
    json_escaped = secret.replace("\\", "\\\\").replace('"', '\\"')
    forms = [secret, quote(secret, safe=""), quote(secret), quote_plus(secret), json_escaped,
             json_escaped.replace("/", "\\/")]
    return list(dict.fromkeys(forms))  # unique, in order


def _scrub_runs(text: str, secret: str) -> str:
    """Replace each maximal stretch covered by runs of >= MIN_RUN characters of `secret`.

    Every such run is a union of MIN_RUN-long windows of the secret, so marking every
    occurrence of every window and joining what is marked finds them all.
    """
    covered = bytearray(len(text))
    hit = False
    for seed in {secret[j:j + MIN_RUN] for j in range(len(secret) - MIN_RUN + 1)}:
        i = text.find(seed)
        while i != -1:
            covered[i:i + MIN_RUN] = b"\x01" * MIN_RUN
            hit = True
            i = text.find(seed, i + 1)
    if not hit:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if covered[i]:
            out.append(MASK)
            while i < n and covered[i]:
                i += 1
        else:
            j = covered.find(1, i)
            j = n if j == -1 else j
            out.append(text[i:j])
            i = j
    return "".join(out)


def _scrub_word(text: str, secret: str) -> str:
    if secret not in text:
        return text
    pattern = rf"(?<![{_WORD}]){re.escape(secret)}(?![{_WORD}])"
    return re.sub(pattern, MASK, text)
