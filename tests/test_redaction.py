"""The redactor's promises, case by case: spellings, decoys, typed keyed pseudonyms written
in the original's spelling, counts by kind, nested values, one failure type, never a partial
result."""

from __future__ import annotations

import re
import time

import pytest

from callout_server.redaction import (
    ALL_KINDS,
    DEFAULT_KINDS,
    RedactionError,
    Redactor,
    find,
)
from callout_server.redaction.checks import (
    id_check_char,
    is_bank_card,
    is_id_number,
    luhn_ok,
    valid_date,
)

KEY = b"unit-test-key-0123456789abcdef!!"
MOBILE = "13872837651"
ID = "110105196304016272"
CARD = "6222021036129701788"


@pytest.fixture
def r() -> Redactor:
    return Redactor(KEY)


def digits_of(text: str) -> str:
    han = dict(zip("零〇一幺二两三四五六七八九", "0011223456789", strict=True))
    return "".join(han.get(c, c) for c in text if c.isdigit() or c in han)


@pytest.mark.parametrize("said", [
    "13872837651", "138 7283 7651", "138-7283-7651", "138，7283，7651", "+86 138 7283 7651",
    "0086-13872837651", "+8613872837651", "一三八七二八三七六五一", "幺三八七两八三七六五幺",
    "幺三八 七二八三 七六五幺", "138七二八三7651", "１３８７２８３７６５１", "1 3 8 7 2 8 3 7 6 5 1",
    "one three eight seven two eight three seven six five one", "(+86) 138-7283-7651",
    "013872837651", "零一三八七二八三七六五一",
])
def test_every_spelling_of_a_mobile_is_found_with_one_value(said: str) -> None:
    found = find(f"我的电话是{said}，谢谢")
    assert [(f.kind, f.value) for f in found] == [("mobile", MOBILE)]


def test_same_value_same_pseudonym_in_every_spelling(r: Redactor) -> None:
    ascii_ = r.redact("138 7283 7651").text
    han = r.redact("一三八七二八三七六五一").text
    assert digits_of(ascii_) == digits_of(han) != MOBILE
    assert r.redact(f"打{MOBILE}").text[1:] == r.redact(f"号码{MOBILE}。").text[2:-1]


def test_pseudonym_keeps_the_spelling(r: Redactor) -> None:
    assert re.fullmatch(r"\+86 154 \d{4} \d{4}", r.redact("+86 138 7283 7651").text)
    out = r.redact("幺三八，七二八三，七六五幺").text
    assert re.fullmatch(r"幺五四，[零幺二三四五六七八九]{4}，[零幺二三四五六七八九]{4}", out), out
    out = r.redact("１３８７２８３７６５１").text
    assert re.fullmatch(r"１５４[０-９]{8}", out), out
    out = r.redact("one three eight seven two eight three seven six five one").text
    assert out.startswith("one five four ") and len(out.split()) == 11


def test_pseudonyms_depend_on_the_key() -> None:
    a = Redactor(KEY).redact(MOBILE).text
    b = Redactor(b"another-key-0123456789abcdefgh!!").redact(MOBILE).text
    assert a != b and a.startswith("154") and b.startswith("154")


def test_kinds_and_counts(r: Redactor) -> None:
    text = f"手机{MOBILE}，再说一遍{MOBILE}，身份证{ID}，卡号{CARD}，邮箱 li.na@163.com"
    out = r.redact(text)
    assert out.kinds == {"mobile": 2, "id_number": 1, "bank_card": 1, "email": 1}
    for value in (MOBILE, ID, CARD, "li.na@163.com"):
        assert value not in out.text
    assert out.changed and not r.redact("好的，谢谢").changed


def test_typed_pseudonyms_are_valid_of_their_kind(r: Redactor) -> None:
    for text, kind in ((ID, "id_number"), (CARD, "bank_card"), ("010-62345678", "landline"),
                       ("zhang@qq.com", "email"), (MOBILE, "mobile")):
        f = find(text)[0]
        p = r.pseudonym(f)
        assert f.kind == kind and p != f.value
        if kind == "id_number":  # a province-level region: valid in form, never issued
            assert p[17] == id_check_char(p[:17]) and valid_date(p[6:14])
            assert 1950 <= int(p[6:10]) <= 2005 and p[2:6] == "0000" and not is_id_number(p)
        if kind == "bank_card":
            assert luhn_ok(p) and is_bank_card(p) and p[:6] == CARD[:6] and p[-4:] == CARD[-4:]
            assert len(p) == len(CARD)
        if kind == "landline":
            assert re.fullmatch(r"010-1\d{7}", p)
        if kind == "email":
            assert p.endswith("@example.com")


def test_redacting_again_keeps_pseudonyms_where_no_real_value_lives(r: Redactor) -> None:
    text = f"手机{MOBILE}，座机010-62345678，身份证{ID}，邮箱 zhang@qq.com"
    once = r.redact(text)
    twice = r.redact(once.text)
    assert twice.text == once.text and twice.kinds == {}


@pytest.mark.parametrize("decoy", [
    "10086", "12315", "95588", "400-820-8820", "4008208820", "800-810-8888", "+86 400 820 8820",
    "尾号1234", "下午三点半", "14:30", "2024-03-15 14:30:00", "每月199元", "¥13,800", "13,800,138,000",
    "13800138000.00", "13872837651元", "订单号6222021036129701788", "合同号 110105196304016272",
    "SF1380013800012", "验证码382916", "12345678901", "tracking number 13872837651",
    "three thousand", "一万三千八百元", "二零二四年三月十五号",
])
def test_decoys_stay_as_said(r: Redactor, decoy: str) -> None:
    text = f"您好，{decoy}，谢谢"
    assert r.redact(text) == r.redact(text) and r.redact(text).text == text


def test_misheard_digit_still_redacted_after_a_cue(r: Redactor) -> None:
    bad_id, bad_card = ID[:-1] + "1", CARD[:-1] + "9"
    assert not is_id_number(bad_id) and not luhn_ok(bad_card)
    assert find(bad_id) == () and find(bad_card) == ()
    assert [f.kind for f in find(f"身份证号{bad_id}")] == ["id_number"]
    assert [f.kind for f in find(f"卡号{bad_card}")] == ["bank_card"]


def test_landline_spellings_and_extension() -> None:
    for said, value in (("010-62345678", "010-62345678"), ("(010)62345678", "010-62345678"),
                        ("（0755）8671 3542", "0755-86713542"), ("+86 10 6234 5678", "010-62345678"),
                        ("010-62345678转8021", "010-62345678-8021"),
                        ("010-62345678-8021", "010-62345678-8021"),
                        ("零幺零 六二三四 五六七八", "010-62345678")):
        assert [(f.kind, f.value) for f in find(f"电话{said}")] == [("landline", value)], said


def test_email_spoken_forms_and_decoys() -> None:
    assert [f.value for f in find("邮箱 zhang wei 艾特 qq 点 com")] == ["zhangwei@qq.com"]
    assert [f.value for f in find("my email is john dot smith at gmail dot com")] == [
        "john.smith@gmail.com"]
    assert find("look at google dot com") == ()
    assert find("icon@2x.png") == ()


def test_optional_kinds_only_when_chosen() -> None:
    text = "我叫张伟，住在建国路88号院3号楼1201室"
    assert find(text) == ()
    assert [f.kind for f in find(text, ALL_KINDS)] == ["name", "address"]
    out = Redactor(KEY, ALL_KINDS).redact(text)
    assert "张伟" not in out.text and "建国路88号" not in out.text and out.text.startswith("我叫")


def test_last4_for_speaking() -> None:
    assert find(f"卡号{CARD}")[0].last4 == CARD[-4:]
    assert find("身份证31010419840406030X")[0].last4 == "030X"


def test_redact_value_nested(r: Redactor) -> None:
    value = {"slots": {"phone": MOBILE, "count": 3, "amount": 12.5, "ok": True, "none": None,
                       "as_int": int(MOBILE)},
             "messages": [{"role": "user", "content": f"我的卡号是{CARD}"}], "pair": ("a", ID)}
    out = r.redact_value(value)
    assert out.kinds == {"mobile": 2, "bank_card": 1, "id_number": 1}
    assert out.value["slots"]["count"] == 3 and out.value["slots"]["ok"] is True
    assert isinstance(out.value["slots"]["as_int"], int)
    assert str(out.value["slots"]["as_int"]) == out.value["slots"]["phone"]
    assert CARD not in out.value["messages"][0]["content"]
    assert isinstance(out.value["pair"], tuple) and ID not in out.value["pair"][1]
    assert value["slots"]["phone"] == MOBILE  # the input is not changed


def test_walk_fast_paths_redact_alike(r: Redactor) -> None:
    """The walk's shortcuts (a text seen clean, a str enum, the nesting bound) change no
    result: a clean text cached is returned as is, a value holding it is still redacted."""
    import enum

    class Role(str, enum.Enum):  # noqa: UP042  # str() of it is "Role.USER", not its text
        USER = "user"

    r.redact("白天都在")  # cached clean
    out = r.redact_value({Role.USER: ["白天都在", f"白天都在{MOBILE}"], "n": 7, "f": 0.5})
    assert out.value == {"user": ["白天都在", out.value["user"][1]], "n": 7, "f": 0.5}
    assert MOBILE not in out.value["user"][1] and out.kinds == {"mobile": 1}
    # under a key seen clean: a number of ten digits or more is walked, a smaller one is not
    out = r.redact_value({"白天都在": int(MOBILE), "n": [int(MOBILE), -int(MOBILE), 999_999_999],
                          "b": [True, None, Role.USER]})
    assert out.kinds == {"mobile": 3}
    assert out.value["白天都在"] != int(MOBILE) and isinstance(out.value["白天都在"], int)
    assert out.value["n"][2] == 999_999_999 and int(MOBILE) not in out.value["n"]
    assert out.value["b"] == [True, None, "user"] and type(out.value["b"][2]) is str
    deep: object = "x"
    for _ in range(70):
        deep = [deep]
    with pytest.raises(RedactionError):
        r.redact_value(deep)


def test_one_failure_type_and_never_partial(r: Redactor, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RedactionError) as err:
        r.redact_value({"x": object()})
    assert err.value.code == "redaction_failed"
    with pytest.raises(RedactionError):
        r.redact(b"13872837651")  # type: ignore[arg-type]
    with pytest.raises(RedactionError):
        Redactor(KEY, max_chars=10).redact("x" * 11)

    import callout_server.redaction.redactor as module

    def broken(*_a: object, **_k: object) -> str:
        raise IndexError("boom")

    monkeypatch.setattr(module, "render", broken)
    with pytest.raises(RedactionError) as err:
        r.redact(f"手机{MOBILE}，邮箱 zhang@qq.com")
    assert MOBILE not in str(err.value) and "zhang" not in str(err.value)
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_configuration_errors() -> None:
    with pytest.raises(ValueError):
        Redactor(b"short")
    with pytest.raises(ValueError, match="unknown"):
        Redactor(KEY, kinds={"mobile", "passport"})
    assert Redactor(KEY).kinds == DEFAULT_KINDS


@pytest.mark.parametrize("said", [
    "31010419840406030X", "310104 19840406 030X", "三幺零幺零四幺九八四零四零六零三零叉",
    "３１０１０４１９８４０４０６０３０Ｘ", "110105196304016272", "幺幺零幺零五幺九六三零四零幺六二七二",
    "one one zero one zero five one nine six three zero four zero one six two seven two",
])
def test_every_key_renders_an_id_pseudonym_in_the_original_spelling(said: str) -> None:
    # One key in eleven gives a check character X: it must be written in any script.
    for k in range(60):
        r = Redactor(f"key-{k:02d}-0123456789abcdef".encode())
        out = r.redact(f"身份证 {said}")
        assert out.kinds == {"id_number": 1}
        assert said not in out.text


@pytest.mark.parametrize("hostile", [
    "a." * 50_000 + "@", "a " * 50_000 + "at x", "1-" * 50_000, "艾特" + "点a" * 50_000,
    "路1号" * 30_000, "一" * 100_000, "a@b." * 30_000,
])
def test_long_hostile_text_costs_linear_time(hostile: str) -> None:
    # A vendor error body is untrusted: no pattern may go quadratic on it.
    r = Redactor(KEY, ALL_KINDS)
    start = time.process_time()
    r.redact(hostile)
    assert time.process_time() - start < 5.0


def test_whole_run_in_many_groups_is_still_one_number() -> None:
    for said in ("幺三八，七二，八三，七六，五幺", "one three eight, seven two, eight three, seven six, five one"):
        assert [f.value for f in find(said)] == [MOBILE]
