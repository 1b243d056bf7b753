"""Mobiles, landlines, ID numbers and bank cards in a text, decoys left alone.

For each digit run (digits.py) every stretch of whole groups is a candidate. A stretch
counts when its digits pass a kind's check (checks.py) and either it is the whole run or a
single group, or its grouping is one that kind is read in (a mobile 3-4-4, a card 4-4-4-4,
an ID 6-8-4): so a phone said after a count (`3，13800138000`) is found, but no mobile is
carved out of the middle of a long order number read in fours. Context rules (context.py)
drop amounts, codes and cued order numbers. The longest stretch wins; the whole run first.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from callout_server.redaction import checks, context
from callout_server.redaction.digits import DIGIT_CHARS, Run, Token, runs, tokens_in
from callout_server.redaction.kinds import BANK_CARD, ID_NUMBER, LANDLINE, MOBILE

_MAX_DIGITS = 24  # 0086 + a landline with area code and a six-digit extension
# No kind is read in more than five groups (4-4-4-4-3, 86 10 6234 5678 8021), nor with two
# one-digit groups: other stretches are not tried (a run of 50,000 "1-" took 20 s before).
_MAX_GROUPS = 5
_MOBILE_GROUPS = frozenset({(11,), (3, 4, 4), (3, 8), (7, 4)})
_ID_GROUPS = frozenset({(18,), (6, 8, 4), (6, 4, 4, 4), (6, 12), (6, 8, 3, 1)})
_EXT = re.compile(rf"[ \t]*(?:转|分机号?|(?i:ext\.?|extension|x))[ \t]*(?:是[ \t]*)?"
                  rf"(?=[{DIGIT_CHARS}])([{DIGIT_CHARS}]{{1,6}})(?![{DIGIT_CHARS}])")


class NumberMatch(NamedTuple):
    kind: str
    start: int
    end: int
    value: str  # canonical: mobile 11 digits; landline 0AREA-LOCAL[-EXT]; ID 18; card digits
    tokens: tuple[Token, ...]  # every written digit of text[start:end], in order
    keep: int  # leading digits written as said in a pseudonym (country code, area code)


def _card_grouped(lens: tuple[int, ...]) -> bool:
    if len(lens) == 2:
        return lens[0] == 6
    return len(lens) in (4, 5) and all(n == 4 for n in lens[:4]) and (
        len(lens) == 4 or 1 <= lens[4] <= 4)


def _country_code(digits: str, lens: tuple[int, ...], plus: bool, structured: bool) -> str:
    if digits.startswith("0086"):
        return "0086"
    if digits.startswith("86") and (plus or lens[0] == 2 or (structured and len(digits) == 13)):
        return "86"
    return ""


def _landline(body: str, bounds: frozenset[int], cc: str, structured: bool) -> tuple[
        str, int] | None:
    """(canonical value, kept digits) for `body` (digits after the country code), or None."""
    national = body if body.startswith("0") else ("0" + body if cc else "")
    if not national or checks.is_company_line(national):
        return None
    shift = len(national) - len(body)  # the 0 a country code drops
    bounds = frozenset(b + shift for b in bounds)
    area = checks.area_code(national)
    if area is None or not (structured or len(area) in bounds):
        return None
    rest = national[len(area):]
    keep = len(cc) + len(area) - shift
    if checks.is_local(rest):
        return f"{area}-{rest}", keep
    for n in (8, 7):  # an extension written as its own group: 010-62345678-8001
        cut = len(area) + n
        ext = rest[n:]
        if (cut in bounds and not any(b > cut for b in bounds) and 1 <= len(ext) <= 6
                and checks.is_local(rest[:n])):
            return f"{area}-{rest[:n]}-{ext}", keep
    return None


class Cues(NamedTuple):
    """What the words just before a run say it is (context.py)."""

    plus: bool = False
    landline: bool = False
    id_number: bool = False
    card: bool = False


_NO_CUES = Cues()


def classify(digits: str, lens: tuple[int, ...], *, whole: bool,
             cues: Cues = _NO_CUES) -> tuple[str, str, int] | None:
    """(kind, canonical value, kept digits) of a stretch of groups, or None."""
    structured = whole or len(lens) == 1
    n = len(digits)
    if n == 18 and "X" not in digits[:-1] and (structured or lens in _ID_GROUPS) and (
            checks.is_id_number(digits) or (cues.id_number and checks.is_id_shaped(digits))):
        return ID_NUMBER, digits, 0
    if "X" in digits:
        return None
    if 16 <= n <= 19 and (structured or _card_grouped(lens)) and (
            checks.is_bank_card(digits) or cues.card):
        return BANK_CARD, digits, 0
    cc = _country_code(digits, lens, cues.plus, structured)
    if cc and lens[0] < len(cc):
        return None
    rest_lens = ((lens[0] - len(cc),) if lens[0] > len(cc) else ()) + lens[1:]
    body = digits[len(cc):]
    if checks.is_mobile(body) and (structured or rest_lens in _MOBILE_GROUPS):
        return MOBILE, body, len(cc)
    if not cc and n == 12 and digits[0] == "0" and structured and checks.is_mobile(digits[1:]):
        return MOBILE, digits[1:], 1  # the long-distance 0 once dialled before a mobile
    bounds, at = set(), 0
    for k in rest_lens[:-1]:
        at += k
        bounds.add(at)
    found = _landline(body, frozenset(bounds), cc, structured)
    if found is not None:
        return LANDLINE, found[0], found[1]
    if cues.landline and not cc and structured and checks.is_local(digits):
        return LANDLINE, digits, 0
    return None


def _candidates(text: str, run: Run) -> list[tuple[bool, int, int, int, int, str, str, int]]:
    """(whole run, digits, first group, last group, trailing X dropped, kind, value, kept)."""
    groups = run.groups
    said = context.before(text, run.start)
    exempt_upto = context.first_segment_end(run) if said.not_personal else -1
    cues = Cues(plus=run.start > 0 and text[run.start - 1] in "+＋", landline=said.landline,
                id_number=said.id_number, card=said.card)
    ext_follows = _EXT.match(text, run.end) is not None
    found = []
    for i in range(len(groups)):
        if i <= exempt_upto:
            continue
        total = singles = 0
        for j in range(i, len(groups)):
            n = len(groups[j].digits)
            total += n
            singles += n == 1
            if total > _MAX_DIGITS:
                break
            last = j == len(groups) - 1
            if j - i >= _MAX_GROUPS or singles > 1:
                if i:
                    break
                if not last:
                    continue  # the whole run may still be one number in any grouping
            if total < 7 or (last and context.unit_after(text, run.end)):
                continue
            if context.glued_to_letters(text, groups[i].start, groups[j].end) and not (
                    last and ext_follows):
                continue
            stretch = groups[i:j + 1]
            digits = "".join(g.digits for g in stretch)
            lens = tuple(len(g.digits) for g in stretch)
            kw = {"whole": i == 0 and last, "cues": cues if i == 0 else _NO_CUES}
            got = classify(digits, lens, **kw)
            cut = 0
            if got is None and digits.endswith("X") and lens[-1] > 1:
                got, cut = classify(digits[:-1], (*lens[:-1], lens[-1] - 1), **kw), 1
            if got is not None:
                found.append((i == 0 and last, total, i, j, cut, *got))
    return found


def _with_extension(text: str, m: NumberMatch) -> NumberMatch:
    """010-62345678转8001, 分机 8001, ext. 8001: the extension belongs to the number."""
    ext = _EXT.match(text, m.end)
    if m.kind != LANDLINE or ext is None or m.value.count("-") != 1:
        return m
    tokens = tuple(tokens_in(text, ext.start(1), ext.end(1)))
    return NumberMatch(m.kind, m.start, ext.end(1),
                       f"{m.value}-{''.join(t.digits for t in tokens)}", m.tokens + tokens, m.keep)


def find_numbers(text: str) -> list[NumberMatch]:
    """Every mobile, landline, ID number and bank card in `text`, in order, not overlapping."""
    out: list[NumberMatch] = []
    for run in runs(text):
        if context.is_amount(run):
            continue
        cands = _candidates(text, run)
        cands.sort(key=lambda c: (not c[0], -c[1], c[2]))
        taken: list[tuple[int, int]] = []
        for _, _, i, j, cut, kind, value, keep in cands:
            if any(i <= b and a <= j for a, b in taken):
                continue
            taken.append((i, j))
            stretch = run.groups[i:j + 1]
            tokens = tuple(t for g in stretch for t in g.tokens)
            if cut:
                tokens = tokens[:-1]
            m = NumberMatch(kind, stretch[0].start, tokens[-1].end, value, tokens, keep)
            out.append(_with_extension(text, m) if j == len(run.groups) - 1 else m)
    out.sort(key=lambda m: m.start)
    return out
