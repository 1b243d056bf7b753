"""The server's two languages, without HTTP: negotiation, the catalogues, validation text.

- `Accept-Language` picks zh or en by q-value, else the default;
- every catalogue (server messages, diagnostics, reasons) has both languages with the same
  fields; English has no Chinese and no full-width punctuation, Chinese no English words;
- every pydantic error type has a Chinese rendering, built from its type and ctx;
- no domain error is raised with finished text (a literal, an f-string, a function that
  returns `str`, or an ApiError subclass passing one to `super().__init__`), and no
  validator (`field_validator`, `model_validator`, `AfterValidator(f)`...) raises a bare
  ValueError (whose words could only be English).
"""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path
from typing import Any

import pydantic_core
import pytest
from pydantic import BaseModel, Field, ValidationError

from callout_server.i18n import MESSAGES, Msg, field_message, invalid, msg, negotiate, text
from callout_server.i18n.validation import JSON_REASONS, ZH
from callout_server.llm import Diagnostic

ROOT = Path(__file__).resolve().parents[1]
HAN = re.compile("[\u4e00-\u9fff]")
FULL_WIDTH = re.compile("[\u3000-\u303f\uff00-\uffef]")
# Words a Chinese sentence may hold: names, not English. Identifiers with _ . - / or digits
# (max_tokens, config.toml) are names by their shape; these are names by convention.
NAMES = {
    # acronyms, formats, protocol words, product names
    "API", "Key", "JSON", "Schema", "HTTP", "URL", "UUID", "ISO", "NUL", "NaN", "Infinity",
    "ASCII", "Unicode", "KB", "GET", "DELETE", "Bearer", "token", "vLLM", "null", "MISSING",
    "Ellipsis", "uXXXX",
    # request and answer fields the sentence names, and values of them
    "intent", "intents", "slots", "values", "enum", "parameters", "output", "window",
    "reasoning", "stop", "think", "function", "name", "description", "type",
    # duration units in `15m, 1h or 7d`
    "h", "m", "d",
}


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def english_words(zh: str) -> list[str]:
    bare = re.sub(r"'[^']*'|`[^`]*`|\{\w+\}|\[[^\]]*\]|--\S+", " ", zh)
    words = re.findall(r"[A-Za-z][A-Za-z0-9_.:/@\-]*", bare)
    return [w for w in words if not re.search(r"[_.:/@\-0-9]", w) and w not in NAMES]


def bilingual() -> dict[str, tuple[str, str]]:
    """Every (zh, en) pair the server can say, by a readable name."""
    out = {f"message {k}": v for k, v in MESSAGES.items()}  # diagnostics' words included
    out |= {f"json {k}": v for k, v in JSON_REASONS.items()}
    return out


# -- negotiation -----------------------------------------------------------------------------

@pytest.mark.parametrize(("header", "default", "expected"), [
    (None, "zh", "zh"), (None, "en", "en"), ("", "en", "en"),
    ("en", "zh", "en"), ("en-US,en;q=0.9", "zh", "en"), ("EN-gb", "zh", "en"),
    ("zh-CN,zh;q=0.9,en;q=0.8", "en", "zh"), ("zh-TW", "en", "zh"),
    ("en;q=0.3, zh;q=0.9", "en", "zh"), ("zh;q=0.2,en;q=0.8", "zh", "en"),
    ("fr-FR,fr;q=0.9", "zh", "zh"), ("fr-FR,fr;q=0.9", "en", "en"),
    ("fr, en;q=0.5", "zh", "en"), ("*", "en", "en"), ("de;q=0.9,*;q=0.5", "zh", "zh"),
    ("en;q=0, zh", "en", "zh"), ("zh;q=0", "zh", "en"), ("en;q=0", "en", "zh"),
    ("en;q=abc, zh;q=0.5", "en", "zh"), ("en;q=2", "zh", "zh"),
    ("en, zh", "zh", "en"), ("zh, en", "en", "zh"),  # equal weights: the header's order
    ("x" * 5000 + ",en", "zh", "en"),  # long headers are parsed (not cached)
])
def test_accept_language_picks_by_quality(header: str | None, default: Any, expected: str) -> None:
    assert negotiate(header, default) == expected


# -- the catalogues --------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(bilingual()))
def test_every_sentence_has_both_languages_with_the_same_fields(name: str) -> None:
    zh, en = bilingual()[name]
    assert zh and en
    assert fields(zh) == fields(en)


def test_english_has_no_chinese_and_no_full_width_punctuation() -> None:
    bad = {name: en for name, (_, en) in bilingual().items()
           if HAN.search(en) or FULL_WIDTH.search(en)}
    assert bad == {}


def test_chinese_has_no_english_words() -> None:
    pairs = {name: zh for name, (zh, _) in bilingual().items()} | {
        f"pydantic {k}": v for k, v in ZH.items()}
    bad = {name: english_words(zh) for name, zh in pairs.items() if english_words(zh)}
    assert bad == {}


def test_every_pydantic_error_type_has_chinese_built_from_its_ctx() -> None:
    known = pydantic_core._pydantic_core.list_all_errors()
    missing = sorted(e["type"] for e in known if e["type"] not in ZH)
    assert missing == [], "a pydantic upgrade added error types: add them to i18n/validation.py"
    for e in known:
        # The Chinese uses only ctx fields pydantic gives that type (its English template's).
        assert fields(ZH[e["type"]]) <= fields(e["message_template_python"]), e["type"]


class Node(BaseModel):
    name: str = Field(max_length=5)
    kind: str = Field(pattern="^(a|b)$")
    count: int = Field(ge=1)
    mode: Any = None


def errors(**data: Any) -> list[dict[str, Any]]:
    with pytest.raises(ValidationError) as info:
        Node.model_validate(data)
    return info.value.errors()


def test_pydantic_errors_are_worded_from_type_and_ctx_in_both_languages() -> None:
    by_field = {e["loc"][0]: e for e in errors(name="toolong", kind="c", count=0)}
    assert field_message(by_field["name"], "zh") == "最多 5 个字符"
    assert field_message(by_field["name"], "en") == "String should have at most 5 characters"
    assert field_message(by_field["count"], "zh") == "应大于或等于 1"
    assert field_message(by_field["kind"], "zh") == "应符合格式 ^(a|b)$"
    [missing] = [e for e in errors(kind="a", count=1) if e["type"] == "missing"]
    assert (field_message(missing, "zh"), field_message(missing, "en")) == ("必填", "Field required")


def test_literal_alternatives_are_listed_the_chinese_way() -> None:
    from typing import Literal

    class Pick(BaseModel):
        tier: Literal["nlu", "chat", "script"]

    with pytest.raises(ValidationError) as info:
        Pick.model_validate({"tier": "x"})
    [e] = info.value.errors()
    assert field_message(e, "zh") == "应为以下之一：'nlu'、'chat'、'script'"
    assert field_message(e, "en") == "Input should be 'nlu', 'chat' or 'script'"


def test_our_validators_raise_codes_worded_from_the_catalogue() -> None:
    exc = invalid("json_too_deep", max_depth=32)
    assert isinstance(exc, ValueError) and str(exc) == "nested deeper than 32 levels"
    error = {"type": exc.type, "ctx": exc.context, "msg": str(exc)}
    assert field_message(error, "zh") == "嵌套超过 32 层"
    assert field_message(error, "en") == "nested deeper than 32 levels"
    with pytest.raises(KeyError):
        invalid("no_such_message")


def test_a_message_is_rendered_per_language_and_is_english_as_text() -> None:
    m = msg("config_not_found", config_id=7)
    assert m.render("zh") == "模型配置 7 不存在"
    assert m.render("en") == str(m) == "model configuration 7 not found"
    assert text("config_not_found", "zh") == "模型配置 ? 不存在"  # a missing value shows as ?
    with pytest.raises(KeyError):
        Msg("no_such_message")


# -- diagnostics: one value, worded per reader -----------------------------------------------

def test_a_diagnostic_reads_in_either_language_from_code_and_numbers() -> None:
    d = Diagnostic.make("timeout", "zh", reason="stalled_keepalive", max_tokens=300,
                        args={"seconds": 2.5, "comments": 4})
    assert d.message == "模型请求超时：流停滞：2.5 秒没有数据，只收到 4 条保活注释"
    assert d.message_in("en") == ("The model request timed out: stream stalled: no data for "
                                  "2.5s (4 keep-alive comments only)")
    assert d.to_dict("en")["advice"] == "Check the inference server's load, or raise the timeout"
    assert d.to_dict()["advice"] == "检查推理服务负载，或调大超时时间"  # its own locale
    vendor = Diagnostic.make("upstream_error", "en", status=401, detail="Incorrect API key")
    assert vendor.message == "The inference server answered an error (HTTP 401): Incorrect API key"
    assert vendor.message_in("zh") == "推理服务返回错误 (HTTP 401)：Incorrect API key"  # verbatim
    filtered = Diagnostic.make("empty_output", finish_reason="content_filter")
    assert "审核" in filtered.message and "content filter" in filtered.message_in("en")


# -- no finished text where a caller's language is needed ------------------------------------

def _trees() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text()) for p in (ROOT / "callout_server").rglob("*.py")
            if "emulator" not in p.parts}


def _api_errors(trees: dict[Path, ast.Module], seed: frozenset[str] = frozenset({"ApiError"})
                ) -> set[str]:
    names, grew = set(seed), True
    while grew:
        grew = False
        for tree in trees.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name not in names and any(
                        getattr(b, "id", getattr(b, "attr", None)) in names for b in node.bases):
                    names.add(node.name)
                    grew = True
    return names


def _returns_str(trees: dict[Path, ast.Module]) -> set[str]:
    """Names of functions annotated `-> str`: what they return is finished text."""
    return {fn.name for tree in trees.values() for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
            and isinstance(fn.returns, ast.Name | ast.Constant)
            and getattr(fn.returns, "id", getattr(fn.returns, "value", None)) == "str"}


def _call_name(node: ast.Call) -> str | None:
    return getattr(node.func, "id", getattr(node.func, "attr", None))


def _finished(node: ast.expr, text_functions: set[str]) -> bool:
    """Whether `node` builds finished text: a literal, an f-string, a concatenation or
    format of one, `str(...)`, or a call of a function that returns `str`."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _finished(node.left, text_functions) or _finished(node.right, text_functions)
    if isinstance(node, ast.Call):
        return _call_name(node) in {"str", "format", "join", *text_functions}
    return False


def _finished_text_errors(trees: dict[Path, ast.Module], errors_: set[str]) -> list[str]:
    """Where a domain error gets finished text: `Forbidden("...")`, `NotFound(f"...")`,
    `Forbidden(why())` with `why() -> str`, or `super().__init__("...")` in an ApiError."""
    text_functions = _returns_str(trees)
    found = []
    for path, tree in trees.items():
        name = path.relative_to(ROOT) if path.is_absolute() else path
        calls: list[ast.Call] = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                                 and _call_name(node) in errors_]
        for cls in ast.walk(tree):  # the message a subclass passes up (ApiError's: to Exception)
            if isinstance(cls, ast.ClassDef) and cls.name in errors_ - {"ApiError"}:
                calls += [node for node in ast.walk(cls) if isinstance(node, ast.Call)
                          and _call_name(node) == "__init__"
                          and isinstance(node.func, ast.Attribute)
                          and isinstance(node.func.value, ast.Call)
                          and _call_name(node.func.value) == "super"]
        for node in calls:
            message = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg == "message"), None)
            if message is not None and _finished(message, text_functions):
                found.append(f"{name}:{node.lineno}")
    return found


def test_no_domain_error_is_raised_with_finished_text() -> None:
    trees = _trees()
    errors_ = _api_errors(trees)
    assert {"NotFound", "Conflict", "ConfigNotFound", "SessionNotFound", "Forbidden",
            "UserNotFound", "LastAdmin", "ManagedByEnvironment"} <= errors_
    found = _finished_text_errors(trees, errors_)
    assert found == [], found


def test_the_finished_text_scan_sees_what_it_must() -> None:
    sample = ast.parse('''
class Gone(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(f"no {name}")
class Fine(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(msg("user_not_found", username=name))
def why(role: str) -> str:
    return "needs " + role
def why_msg(role: str) -> Msg:
    return msg("forbidden_role", role=role)
raise Forbidden(why("viewer"))
raise Forbidden("plain")
raise Forbidden("needs " + role)
raise Forbidden("needs {}".format(role))
raise Forbidden(message=str(role))
raise Forbidden(why_msg("viewer"))
raise Gone(name)
raise Forbidden(msg("csrf_failed"), code="csrf_failed")
''')
    trees = {Path("sample.py"): sample}
    found = _finished_text_errors(trees, _api_errors(trees, frozenset({"Forbidden", "NotFound"})))
    assert found == [f"sample.py:{n}" for n in (12, 13, 14, 15, 16, 4)], found


def _validator_functions(trees: dict[Path, ast.Module]) -> set[str]:
    """Functions pydantic runs as validators through `Annotated[..., AfterValidator(f)]`."""
    kinds = {"AfterValidator", "BeforeValidator", "PlainValidator", "WrapValidator"}
    return {arg.id for tree in trees.values() for node in ast.walk(tree)
            if isinstance(node, ast.Call) and _call_name(node) in kinds
            for arg in node.args if isinstance(arg, ast.Name)}


def test_no_validator_raises_a_bare_value_error() -> None:
    trees = _trees()
    annotated = _validator_functions(trees)
    assert {"check_username", "check_new_password", "check_json"} <= annotated
    found = []
    for path, tree in trees.items():
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            decorators = {getattr(getattr(d, "func", d), "id", None) for d in fn.decorator_list}
            if not (decorators & {"field_validator", "model_validator"} or fn.name in annotated):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and getattr(
                        node.exc.func, "id", None) == "ValueError":
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == [], found
