"""What around a number says it is not personal data: the decoys that must stay as said.

- Before it: an order, contract, tracking, invoice, policy... number cue (`订单号`, `合同编号`,
  `order no.`, `ref`), a tail-number cue (`尾号`, `last four`), a currency sign or code.
- After it: a currency, a unit or a count (`元`, `块`, `万`, `%`, `个`, `次`, `天`, `yuan`...).
- Its own shape: an amount with thousands separators (`13,800,138,000`) or decimals
  (`13800138000.00`); a code glued to letters (`SF1380013800012`, `ORD2024...`).
- A landline cue (`座机`, `固话`, `landline`) makes a bare 7-8 digit local number a landline.
- An ID cue (`身份证`) or a card cue (`卡号`, `card number`) accepts a number whose checksum
  fails (one misheard digit): the other digits are still the customer's.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from callout_server.redaction.digits import Run, strip_space

_CUE_WINDOW = 24
# Cues are words just before a number, perhaps with a suffix (号码, number) and filler (：是).
# Checked as suffixes of the lowered window (str.endswith): an end-anchored regex search tried
# every position of the window and cost more than the rest of the detector together.
_FILLER = " \t\u3000:：#是为"
_EN_FILLER = (" is", " was", " are")
_SUFFIXES = ("号码", "编号", "号", "码", " number", " no.", " no", " id", "#")
_NOT_PERSONAL = (
    "订单", "单号", "合同", "编号", "流水", "工单", "运单", "快递", "物流", "发票", "保单", "批次",
    "序列号", "型号", "尾号", "后四位", "末四位", "后4位", "末4位", "验证码", "动态码", "会员号", "工号",
    "房号", "车次", "航班", "票号", "交易号", "账单", "凭证", "条码", "商品码", "案件",
    "order", "contract", "ref", "reference", "tracking", "invoice", "ticket", "case",
    "confirmation", "serial", "policy", "booking", "transaction", "receipt", "ending in",
    "ending with", "last four", "last 4", "code",
    # currency: an amount follows
    "¥", "￥", "$", "€", "£", "rmb", "cny", "usd", "人民币", "美元",
)
_LANDLINE = ("座机", "固话", "固定电话", "办公电话", "办公室电话", "家里电话", "家庭电话", "单位电话",
             "landline", "office phone", "home phone", "office number")
# An ID or card cue: ASR mishears a digit now and then, and a checksum that fails then must
# not leave seventeen right digits in the log.
_ID = ("身份证", "证件", "id card", "id number", "identity card", "id no.", "id no", "id")
_CARD = ("银行卡", "信用卡", "储蓄卡", "借记卡", "卡号", "card number", "card no.", "card no", "card")
_UNIT_AFTER = re.compile(
    r"\s*(?:元|块|圆|毛|角|万|亿|美元|美金|刀|%|％|‰|个|次|人|位|件|台|张|份|天|年|月|日|小时|分钟"
    r"|秒|岁|斤|公斤|千克|克|吨|米|公里|平|亩|升|度|倍|(?i:yuan|rmb|cny|dollars?|usd|kg|km"
    r"|percent|times|minutes?|hours?|days?|people|pcs)(?![A-Za-z]))"
)
_STRONG = frozenset("，,、")
_LETTERS_THEN_DIGIT = re.compile(r"[A-Za-z]+[0-9]")


class Before(NamedTuple):
    """What the words just before a run say about it."""

    not_personal: bool  # an order/contract/tracking... number, a tail number, an amount
    landline: bool
    id_number: bool
    card: bool


def _ends_with_word(window: str, cues: tuple[str, ...]) -> bool:
    if not window.endswith(cues):
        return False
    # An English cue is a whole word: "showcase", "said" are no "case", "id".
    return any(window.endswith(c) and not (c[0].isascii() and c[0].isalpha() and len(window) > len(c)
                                           and window[-len(c) - 1].isascii()
                                           and window[-len(c) - 1].isalpha())
               for c in cues)


def _by_last_char(cues: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = {}
    for c in cues:
        index.setdefault(c[-1], []).append(c)
    return {k: tuple(v) for k, v in index.items()}


# Indexed by last character: a window is compared with the two or three cues that can end it,
# not with sixty (endswith over a tuple of sixty cost microseconds on Chinese text).
_NOT_PERSONAL_AT = _by_last_char(_NOT_PERSONAL)
_LANDLINE_AT = _by_last_char(_LANDLINE)
_ID_AT = _by_last_char(_ID)
_CARD_AT = _by_last_char(_CARD)
_SUFFIXES_AT = _by_last_char(_SUFFIXES)
_NOTHING = Before(False, False, False, False)


def _cued(windows: list[str], index: dict[str, tuple[str, ...]]) -> bool:
    for w in windows:
        cues = index.get(w[-1]) if w else None
        if cues and _ends_with_word(w, cues):
            return True
    return False


def before(text: str, start: int) -> Before:
    window = text[max(0, start - _CUE_WINDOW):start].rstrip(_FILLER).lower()
    if window.endswith(_EN_FILLER):  # "my card number is ..."
        window = window[:window.rfind(" ")].rstrip(_FILLER)
    if not window:
        return _NOTHING
    windows = [window]
    for s in _SUFFIXES_AT.get(window[-1], ()):
        if window.endswith(s):
            windows.append(window[:-len(s)].rstrip(_FILLER))
    return Before(_cued(windows, _NOT_PERSONAL_AT), _cued(windows, _LANDLINE_AT),
                  _cued(windows, _ID_AT), _cued(windows, _CARD_AT))


def is_amount(run: Run) -> bool:
    """A formatted quantity: thousands separators or a decimal tail."""
    seps = [strip_space(s) for s in run.seps]
    if not seps:
        return False
    if seps[-1] == "." and len(run.groups[-1].digits) <= 2:
        return True
    return (all(s == "," for s in seps) and 1 <= len(run.groups[0].digits) <= 3
            and all(len(g.digits) == 3 for g in run.groups[1:]))


def first_segment_end(run: Run) -> int:
    """Index of the last group before the first comma-like separator (the cue covers those)."""
    for k, sep in enumerate(run.seps):
        if _STRONG & set(sep):
            return k
    return len(run.groups) - 1


def unit_after(text: str, end: int) -> bool:
    return _UNIT_AFTER.match(text, end) is not None


def glued_to_letters(text: str, start: int, end: int) -> bool:
    """A code such as `SF1380013800012` or `1380013800A12`: ASCII letters touch the digits.

    Letters before the digits make a code; letters after them only when digits follow again
    (`13800138000OK` is a number and a word run together, and is redacted).
    """
    before = text[start - 1] if start else ""
    if before.isascii() and before.isalpha() and "0" <= text[start] <= "9":
        return True
    m = _LETTERS_THEN_DIGIT.match(text, end)
    return m is not None and "0" <= text[end - 1] <= "9"
