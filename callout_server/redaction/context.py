"""What around a number says it is not personal data: the decoys that must stay as said.

- Before it: an order, contract, tracking, invoice, policy... number cue (`订单号`, `合同编号`,
  `order no.`, `ref`), a tail-number cue (`尾号`, `last four`), a currency sign or code.
- After it: a currency, a unit or a count (`元`, `块`, `万`, `%`, `个`, `次`, `天`, `yuan`...).
- Its own shape: an amount with thousands separators (`13,800,138,000`) or decimals
  (`13800138000.00`); a code glued to letters (`SF1380013800012`, `ORD2024...`).
- A landline cue (`座机`, `固话`, `landline`) makes a bare 7-8 digit local number a landline.
"""

from __future__ import annotations

import re

from callout_server.redaction.digits import Run, strip_space

_CUE_WINDOW = 24
_NOT_PERSONAL_BEFORE = re.compile(
    r"(?:订单|单号|合同|编号|流水|工单|运单|快递|物流|发票|保单|批次|序列号|型号|尾号|后四位|末四位"
    r"|后4位|末4位|验证码|动态码|会员号|工号|房号|车次|航班|票号|交易号|账单|凭证|条码|商品码|案件"
    r"|(?i:order|contract|ref|reference|tracking|invoice|ticket|case|confirmation|serial|policy"
    r"|booking|transaction|receipt|ending in|ending with|last four|last 4|code))"
    r"(?:号码|编号|号|码|(?i: number| no\.?| id|#))?[\s:：#是为]{0,3}$"
)
_CURRENCY_BEFORE = re.compile(r"(?:[¥￥$€£]|(?i:rmb|cny|usd)|人民币|美元)\s*$")
_UNIT_AFTER = re.compile(
    r"\s*(?:元|块|圆|毛|角|万|亿|美元|美金|刀|%|％|‰|个|次|人|位|件|台|张|份|天|年|月|日|小时|分钟"
    r"|秒|岁|斤|公斤|千克|克|吨|米|公里|平|亩|升|度|倍|(?i:yuan|rmb|cny|dollars?|usd|kg|km"
    r"|percent|times|minutes?|hours?|days?|people|pcs)(?![A-Za-z]))"
)
_LANDLINE_CUE = re.compile(
    r"(?:座机|固话|固定电话|办公电话|办公室电话|家里电话|家庭电话|单位电话|(?i:landline|office phone"
    r"|home phone|office number))(?:号码|号|(?i: number))?[\s:：是为]{0,3}$"
)
_STRONG = frozenset("，,、")


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


def exempt_before(text: str, start: int) -> bool:
    before = text[max(0, start - _CUE_WINDOW):start]
    return (_NOT_PERSONAL_BEFORE.search(before) is not None
            or _CURRENCY_BEFORE.search(before) is not None)


def unit_after(text: str, end: int) -> bool:
    return _UNIT_AFTER.match(text, end) is not None


def glued_to_letters(text: str, start: int, end: int) -> bool:
    """A code such as `SF1380013800012`: ASCII letters touch the digits."""
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    return (before.isascii() and before.isalpha() and "0" <= text[start] <= "9") or (
        after.isascii() and after.isalpha() and "0" <= text[end - 1] <= "9")


def landline_cue_before(text: str, start: int) -> bool:
    return _LANDLINE_CUE.search(text[max(0, start - _CUE_WINDOW):start]) is not None
