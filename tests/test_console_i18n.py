"""The console speaks one language at a time: its dictionaries and the text its scripts put
on screen (no browser here; tests/browser/test_console_languages.py looks at the pages).

- both dictionaries have the same keys and the same {fields} in each entry;
- English has no Chinese and no full-width punctuation; Chinese has no English words
  (parameter names such as max_tokens, and acronyms, are names, not words);
- no script puts literal text on screen past the dictionaries (h() children, badge(),
  toast(), textContent, label / title / aria-label / placeholder), and no Chinese lives
  outside i18n.js;
- the page template's Chinese text is all marked data-i18n (replaced on load).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import ClassVar

import pytest

from tests.support.console_text import (
    JS_DIR,
    TEMPLATES,
    dictionaries,
    screen_literals,
    strip_comments,
)

DICTS = dictionaries()
HAN = re.compile("[\u4e00-\u9fff]")
# CJK punctuation, full-width forms, corner brackets.
FULL_WIDTH = re.compile("[\u3000-\u303f\uff00-\uffef]")
FIELD = re.compile(r"\{(\w+)\}")
# Words a Chinese entry may hold: acronyms, units, product and parameter names.
NAMES = {"API", "Key", "JSON", "NLU", "HTTP", "URL", "ID", "P50", "P90", "P95", "P99", "ms",
         "token", "Token", "curl",
         "model", "messages", "input", "stream"}  # the request body keys extra_params cannot set
# What a script may show as a literal: units and the API styles' wire names.
SCREEN_WORDS = {"ms", "responses"}
# The toggle names the other language in that language.
OTHER_LANGUAGE = "lang_other"


def test_both_languages_have_the_same_keys() -> None:
    zh, en = DICTS["zh"], DICTS["en"]
    assert len(zh) > 200
    assert sorted(set(zh) - set(en)) == [], "missing in English"
    assert sorted(set(en) - set(zh)) == [], "missing in Chinese"


@pytest.mark.parametrize("key", sorted(DICTS["zh"]))
def test_an_entry_names_the_same_fields_in_both_languages(key: str) -> None:
    assert set(FIELD.findall(DICTS["zh"][key])) == set(FIELD.findall(DICTS["en"][key]))


def test_english_has_no_chinese_and_no_full_width_punctuation() -> None:
    bad = {k: v for k, v in DICTS["en"].items()
           if k != OTHER_LANGUAGE and (HAN.search(v) or FULL_WIDTH.search(v))}
    assert bad == {}


def english_words(text: str) -> list[str]:
    text = FIELD.sub(" ", text)
    words = re.findall(r"[A-Za-z][A-Za-z0-9_.\-]*", text)
    # identifiers (max_tokens, config.toml, chat-completions) are names, not words
    return [w for w in words if not re.search(r"[_.\-0-9]", w) and w not in NAMES
            and not (w.isupper() and len(w) <= 5)]


def test_chinese_has_no_english_words() -> None:
    bad = {k: english_words(v) for k, v in DICTS["zh"].items()
           if k != OTHER_LANGUAGE and english_words(v)}
    # A parameter label may be the parameter's own name (max_tokens, temperature ...).
    bad = {k: w for k, w in bad.items() if DICTS["zh"][k] != DICTS["en"][k]}
    assert bad == {}


def _scripts() -> list[tuple[str, str]]:
    return [(str(p.relative_to(JS_DIR)), p.read_text()) for p in sorted(JS_DIR.rglob("*.js"))
            if p.name != "i18n.js"]


def test_no_script_puts_untranslated_text_on_screen() -> None:
    keys = set(DICTS["zh"])
    found = []
    for name, source in _scripts():
        for line, text in screen_literals(source):
            if text in keys:  # a key handed on for t() (a route's title)
                continue
            prose = re.sub(r"\S*[/:]\S*", " ", text)  # URLs and paths
            words = [w for w in re.findall(r"[A-Za-z][A-Za-z_\-]+", prose)
                     if "_" not in w and "-" not in w and w not in SCREEN_WORDS]
            if words or HAN.search(text):
                found.append(f"{name}:{line}: {text!r}")
    assert found == []


def test_no_chinese_outside_the_dictionaries() -> None:
    found = [f"{name}:{n}: {line.strip()}" for name, source in _scripts()
             for n, line in enumerate(strip_comments(source).splitlines(), 1) if HAN.search(line)]
    assert found == []


class _TemplateText(HTMLParser):
    """Chinese text in the template that no data-i18n (or <title>/<noscript>) covers."""

    SKIP: ClassVar[set[str]] = {"title", "noscript", "script", "style"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []
        self.bare: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"meta", "link", "br", "img", "input", "path"}:
            return
        self.stack.append((tag, any(k == "data-i18n" for k, _ in attrs)))

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        covered = any(i18n or tag in self.SKIP for tag, i18n in self.stack)
        if HAN.search(data) and not covered:
            self.bare.append(data.strip())


def test_template_text_is_replaced_from_the_dictionaries() -> None:
    for template in TEMPLATES.glob("*.html"):
        parser = _TemplateText()
        parser.feed(template.read_text())
        assert parser.bare == [], template.name
    assert 'aria-label="主导航" data-i18n-aria-label="nav_label"' in (
        TEMPLATES / "index.html").read_text()


def test_the_scanner_sees_what_it_must() -> None:
    """The literal scanner itself: it finds literal labels and children, skips t() keys."""
    sample = '''
      const a = field({ label: "output", name: "output" });
      h("td", {}, t("time"), "reasoning", `${n} ms`);
      badge(`ended: ${x}`, "ok");
    '''
    texts = [text for _, text in screen_literals(sample)]
    assert "output" in texts and "reasoning" in texts and "time" not in texts
    assert any("ended:" in x for x in texts) and "ok" not in texts
