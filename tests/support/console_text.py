"""Reading the console's sources for the i18n tests: its two dictionaries, and the literal
text its scripts would put on screen without going through them (no tests here).

    dictionaries()            {"zh": {key: text}, "en": {key: text}} from admin_ui/static/js/i18n.js
    screen_literals(source)   [(line, text)]: literal text handed to h() children, badge(),
                              toast(), textContent, and label / title / aria-label /
                              placeholder properties; keys given to t() are not text
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JS_DIR = ROOT / "admin_ui" / "static" / "js"
TEMPLATES = ROOT / "admin_ui" / "templates"

_ENTRY = re.compile(r"""(?:^|[\s,{])([A-Za-z_][A-Za-z0-9_]*)\s*:\s*"((?:[^"\\]|\\.)*)\"""")


def dictionaries() -> dict[str, dict[str, str]]:
    source = (JS_DIR / "i18n.js").read_text()
    out = {}
    for lang in ("zh", "en"):
        block = re.search(rf"const {lang} = \{{(.*?)\n\}};", source, re.S)
        assert block, f"no `const {lang} = {{...}};` in i18n.js"
        body = "\n".join(line.split("//", 1)[0] if line.lstrip().startswith("//") else line
                         for line in block.group(1).splitlines())
        out[lang] = {k: bytes(v, "utf-8").decode("unicode_escape").encode("latin-1").decode()
                     for k, v in _ENTRY.findall(body)}
    return out


# -- a small scanner for the console's JavaScript ----------------------------------------

def _skip_string(src: str, i: int) -> int:
    """Index after the string literal starting at src[i] (", ' or `, with ${} nesting)."""
    quote = src[i]
    i += 1
    while i < len(src):
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            return i + 1
        if quote == "`" and src.startswith("${", i):
            i = _skip_balanced(src, i + 1)
            continue
        i += 1
    return i


def _skip_balanced(src: str, i: int) -> int:
    """src[i] is an opening bracket: the index after its partner."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[src[i]]]
    i += 1
    while i < len(src) and stack:
        c = src[i]
        if c in "\"'`":
            i = _skip_string(src, i)
            continue
        if src.startswith("//", i):
            i = src.find("\n", i)
            i = len(src) if i < 0 else i
            continue
        if src.startswith("/*", i):
            i = src.find("*/", i) + 2
            continue
        if c in pairs:
            stack.append(pairs[c])
        elif c == stack[-1]:
            stack.pop()
        i += 1
    return i


def _top_level(src: str, i: int, end: int, stops: str) -> int:
    """Index of the first character in `stops` from i on that is outside strings and
    brackets (`end` when there is none)."""
    while i < end:
        c = src[i]
        if c in "\"'`":
            i = _skip_string(src, i)
        elif c in "([{":
            i = _skip_balanced(src, i)
        elif c in stops:
            return i
        else:
            i += 1
    return end


def _split_args(src: str, start: int, end: int) -> list[tuple[int, str]]:
    """Top-level comma-separated pieces of src[start:end] with their offsets."""
    out, piece = [], start
    while (comma := _top_level(src, piece, end, ",")) < end:
        out.append((piece, src[piece:comma]))
        piece = comma + 1
    if src[piece:end].strip():
        out.append((piece, src[piece:end]))
    return out


def _static_parts(template: str) -> str:
    """A template literal's text without its ${...} parts (which may nest templates)."""
    out, i = [], 1
    while i < len(template) - 1:
        if template.startswith("${", i):
            i = _skip_balanced(template, i + 1)
            out.append(" ")
            continue
        if template[i] == "\\":
            out.append(template[i:i + 2])
            i += 2
            continue
        out.append(template[i])
        i += 1
    return "".join(out)


def strip_comments(src: str) -> str:
    """The source without // and /* */ comments (strings left alone)."""
    out, i = [], 0
    while i < len(src):
        c = src[i]
        if c in "\"'`":
            j = _skip_string(src, i)
            out.append(src[i:j])
            i = j
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = len(src) if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i) + 2
            out.append("\n" * src.count("\n", i, j))  # keep line numbers
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _top_literals(expr: str) -> list[str]:
    """Text of the string and template literals at the top level of an expression (not in
    a call's arguments or an object): what the expression can put on screen itself."""
    texts, i = [], 0
    while i < len(expr):
        c = expr[i]
        if c in "\"'":
            j = _skip_string(expr, i)
            texts.append(expr[i + 1:j - 1])
            i = j
            continue
        if c == "`":
            j = _skip_string(expr, i)
            texts.append(_static_parts(expr[i:j]))
            i = j
            continue
        if c in "([{":
            i = _skip_balanced(expr, i)
            continue
        i += 1
    return texts


_CALLS = {"h": slice(2, None), "badge": slice(0, 1), "toast": slice(0, 1)}
_CALL = re.compile(r"(?<![\w.$])(h|badge|toast)\(")
_PROP = re.compile(r"""(?:(?<=[{,\s])(?:label|title|placeholder)|"aria-label")\s*:\s*""")
_ASSIGN = re.compile(r"\.textContent\s*=\s*")


def screen_literals(src: str) -> list[tuple[int, str]]:
    src = strip_comments(src)
    found: list[tuple[int, str]] = []

    def add(offset: int, expr: str) -> None:
        line = src.count("\n", 0, offset) + 1
        found.extend((line, text) for text in _top_literals(expr) if text.strip())

    for m in _CALL.finditer(src):
        open_at = m.end() - 1
        close = _skip_balanced(src, open_at) - 1
        for offset, arg in _split_args(src, open_at + 1, close)[_CALLS[m.group(1)]]:
            add(offset, arg)
    for pattern in (_PROP, _ASSIGN):
        for m in pattern.finditer(src):
            # the value runs to the next top-level , ; ) or } after it
            i = _top_level(src, m.end(), len(src), ",;)}\n")
            add(m.end(), src[m.end():i])
    return found
