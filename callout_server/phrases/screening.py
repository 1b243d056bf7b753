"""Call screening rules: who answered, from the first utterance heard, without a model.

    screen("您好！您拨打的电话已关机。Sorry! The subscriber you dialed is power off.")
      -> Screening(answered_by="carrier", carrier_status="powered_off",
                   rule="carrier.announcement", cue="已关机", start=3, end=12)
    screen("我手机快关机了你快说") -> None      (the rules do not settle it: ask the model)

Rules, first that applies (cues: `announcements.py`):

- `unknown.empty`: nothing but noise or punctuation was heard.
- `human.self_identified`: 我就是机主 / 我是本人 (and no machine shape beside it).
- `carrier.announcement` / `carrier.status_tail` / `carrier.lead_tail`: an announcement's
  shape, never a status word alone: a lead (您拨打的 / the number you dialed) with a status
  after it, a status with a tail after it (请稍后再拨 / please redial later), or a lead with
  a tail (status missed by the ASR: `carrier_status` null). A negated status (这不是空号) is
  none. `carrier.own_line`: the carrier speaks about the calling line itself (您的电话已欠费):
  a carrier with no status of the number dialed.
- `voicemail.recording`: an announcement that offers a recording (请在嘀声后留言).
- `voicemail.greeting`: a phone's call assistant or a mailbox (机主的来电助理, 语音信箱,
  please leave a message).
- `ivr.menu`: a menu or a switchboard (…请按1, 欢迎致电, press 1).
- `human.greeting`: the whole utterance is how people pick up (喂你好, 哪位, 嗯对是我).

A person saying a carrier word (我手机快关机了你快说, 我现在正忙待会打, 这不是空号我就是机主) meets
none of the machine rules: the answer is `human` or None, never a machine. A machine cue
beside a self-identification is a conflict: None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

from callout_server.phrases import announcements as cues
from callout_server.phrases.matcher import Found, PhraseBook
from callout_server.phrases.normalize import Normalized, normalize

AnsweredBy = Literal["human", "voicemail", "carrier", "ivr", "unknown"]
CarrierStatus = Literal["powered_off", "vacant", "suspended", "busy", "unreachable"]

LEAD_GAP = 12  # normalised characters between a lead and its status (您拨打的[电话号码]已关机)
TAIL_GAP = 8  # between a status and its tail
GREETING_MAX = 24  # longer utterances are not "just a greeting"

_LEAD, _TAIL, _OWN, _VM, _REC, _IVR, _SELF, _NOT_SELF, _GREET, _NEG = (
    "lead", "tail", "own_line", "voicemail", "recording", "ivr", "self", "not_self", "greeting",
    "negator",
)
_STATUS = "status:"


@dataclass(frozen=True, slots=True)
class Screening:
    """What the rules decided, which rule, and the cue and span it anchored on
    (`utterance[start:end]`)."""

    answered_by: AnsweredBy
    carrier_status: CarrierStatus | None
    rule: str
    cue: str
    start: int
    end: int


def _book() -> PhraseBook:
    entries: list[tuple[str, str]] = [(_LEAD, p) for p in cues.LEADS]
    for status, wordings in cues.STATUSES.items():
        entries += [(_STATUS + status, p) for p in wordings]
    for label, table in ((_TAIL, cues.TAILS), (_OWN, cues.OWN_LINE), (_VM, cues.VOICEMAIL),
                         (_REC, cues.RECORDING), (_IVR, cues.IVR), (_SELF, cues.SELF),
                         (_NOT_SELF, cues.NOT_SELF), (_NEG, cues.NEGATORS)):
        entries += [(label, p) for p in table]
    return PhraseBook(entries, wildcards=True)


_BOOK = _book()
# Apart: greetings only matter in a short utterance, and their one-character cues (喂, 是, 我)
# would otherwise be checked in every long one.
_GREETINGS = PhraseBook([(_GREET, p) for p in cues.GREETINGS])


def screen(utterance: str) -> Screening | None:
    """The rule answer for a first utterance, or None when the rules do not settle it."""
    norm = normalize(utterance)
    if not norm.text:
        return Screening("unknown", None, "unknown.empty", "", 0, 0)
    found = _BOOK.search(norm)
    groups: dict[str, list[Found]] = {}
    for f in found:
        groups.setdefault(f.pattern.label, []).append(f)
    machine = _machine(norm, groups)
    selves = [s for s in groups.get(_SELF, ())
              if not any(s.overlaps(n) for n in groups.get(_NOT_SELF, ()))]
    if selves:
        return None if machine else _answer(norm, "human", None, "human.self_identified", selves[0])
    if machine:
        return machine
    if len(norm.text) <= GREETING_MAX:
        greetings = _GREETINGS.search(norm)
        if greetings and _covered(norm, greetings):
            return Screening("human", None, "human.greeting", greetings[0].pattern.text, 0,
                             len(utterance))
    return None


def _machine(norm: Normalized, groups: dict[str, list[Found]]) -> Screening | None:
    negators = [n for n in groups.get(_NEG, ())
                if not any(_inside(n, f) for f in _all_cues(groups) if f.pattern.label != _NEG)]

    def live(label: str) -> list[Found]:
        return [f for f in groups.get(label, ()) if not _negated(norm, f, negators)]

    statuses = _longest([f for label in groups if label.startswith(_STATUS) for f in live(label)])
    leads, tails = live(_LEAD), live(_TAIL)
    carrier = _carrier(norm, leads, statuses, tails)
    recording = live(_REC)
    if carrier is not None and not recording:
        return carrier
    voicemail = recording or live(_VM)
    if voicemail:
        rule = "voicemail.recording" if carrier is not None else "voicemail.greeting"
        return _answer(norm, "voicemail", None, rule, voicemail[0])
    own = live(_OWN)
    if own:
        return _answer(norm, "carrier", None, "carrier.own_line", own[0])
    ivr = live(_IVR)
    if ivr:
        return _answer(norm, "ivr", None, "ivr.menu", ivr[0])
    return None


def _carrier(norm: Normalized, leads: list[Found], statuses: list[Found],
             tails: list[Found]) -> Screening | None:
    for status in statuses:
        kind = status.pattern.label.removeprefix(_STATUS)
        for lead in leads:
            if lead.end <= status.start and status.start - lead.end <= LEAD_GAP:
                return _answer(norm, "carrier", kind, "carrier.announcement", status,
                               start=lead.start)
    for status in statuses:
        kind = status.pattern.label.removeprefix(_STATUS)
        for tail in tails:
            if tail.start >= status.end and tail.start - status.end <= TAIL_GAP:
                return _answer(norm, "carrier", kind, "carrier.status_tail", status,
                               end=tail.end)
    for lead in leads:
        for tail in tails:
            if tail.start >= lead.end and tail.start - lead.end <= LEAD_GAP + TAIL_GAP:
                return _answer(norm, "carrier", None, "carrier.lead_tail", lead, end=tail.end)
    return None


def _answer(norm: Normalized, answered_by: AnsweredBy, status: str | None, rule: str,
            cue: Found, *, start: int | None = None, end: int | None = None) -> Screening:
    s, e = norm.span(cue.start if start is None else start, cue.end if end is None else end)
    return Screening(answered_by, cast("CarrierStatus | None", status), rule, cue.pattern.text,
                     s, e)


def _all_cues(groups: dict[str, list[Found]]) -> list[Found]:
    return [f for fs in groups.values() for f in fs]


def _inside(inner: Found, outer: Found) -> bool:
    return inner is not outer and outer.start <= inner.start and inner.end <= outer.end \
        and (outer.end - outer.start) > (inner.end - inner.start)


def _negated(norm: Normalized, f: Found, negators: list[Found]) -> bool:
    """A negator right before the cue (at most one token between, same clause)."""
    return any(n.end <= f.start and not norm.clause_break(n.end - 1, f.start + 1)
               and norm.tokens_between(n.end, f.start) <= 1 for n in negators)


def _longest(found: list[Found]) -> list[Found]:
    """Drop statuses contained in a longer one (out of service ⊂ out of service area)."""
    return [f for f in found if not any(_inside(f, g) for g in found)]


def _covered(norm: Normalized, greetings: list[Found]) -> bool:
    covered = bytearray(len(norm.text))
    for g in greetings:
        covered[g.start:g.end] = b"\1" * (g.end - g.start)
    return all(covered)
