"""Properties of the redactor over generated text (hypothesis): it never raises on any
string, leaves text without digits, '@' or cue words as it is, and whatever a valid mobile,
ID or card is embedded in, the value never survives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from callout_server.redaction import Redactor
from callout_server.redaction.checks import id_check_char, luhn_digit

R = Redactor(b"property-test-key-0123456789abcd")
FILLER = st.text(alphabet=st.sampled_from(list("你好谢谢的了吗请问是我在呢啊，。？！ abcxyzABC")),
                 max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_never_raises_and_keeps_length_sane(text: str) -> None:
    out = R.redact(text)
    assert (out.text == text) == (not out.kinds)


@settings(max_examples=200, deadline=None)
@given(FILLER)
def test_text_without_numbers_is_untouched(text: str) -> None:
    assert R.redact(text).text == text


@settings(max_examples=200, deadline=None)
@given(FILLER, FILLER, st.sampled_from("3456789"), st.integers(0, 10 ** 9 - 1))
def test_a_mobile_never_survives(before: str, after: str, second: str, rest: int) -> None:
    mobile = "1" + second + str(rest).zfill(9)
    if mobile.startswith("154"):
        return  # the pseudonym segment
    out = R.redact(f"{before}，{mobile}{after}")  # letters glued before make a code: not here
    assert mobile not in out.text and out.kinds.get("mobile") == 1


@settings(max_examples=200, deadline=None)
@given(FILLER, FILLER, st.integers(0, 10 ** 12 - 1))
def test_cards_and_ids_never_survive(before: str, after: str, n: int) -> None:
    body = "622202" + str(n).zfill(12)
    card = body + luhn_digit(body)
    first17 = "11010519800101" + str(n % 1000).zfill(3)
    id_number = first17 + id_check_char(first17)
    out = R.redact(f"{before} {card}，{id_number}{after}")
    assert card not in out.text and id_number not in out.text
