"""Call screening: who answered the line (a person, a mailbox, the carrier, a menu).

    screened = await ScreenService(upstreams, route, recorder).screen(ScreenRequest(...))

Carrier announcements, voicemail and call-assistant greetings and IVR menus are templated
speech: the phrase rules (`callout_server.phrases.screen`, pure, tens of microseconds)
settle them without a model call, and a person saying a carrier word is left to the model
(docs/guards.md). What the rules do not settle goes to the active NLU configuration with
its own small prompt, inside `deadline_ms` (counted from the request's arrival, failover
included). A model that fails, is late or answers nothing usable gives `unknown` with
`source: "fallback"` and the diagnostic: the dialer decides, it never gets a 5xx for it.

Every answer is in the call log: a rule's as a record with `source: "rule"` (which rule,
what it answered), a model's as its call's record (`record_call`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast, get_args

from callout_server.calllog.reports import NULL_RECORDER, Recorder, record_call, record_rule
from callout_server.i18n import current
from callout_server.llm import (
    Diagnostic,
    JSONExtractionError,
    LLMConfig,
    LLMRequest,
    Locale,
    extract_json_object,
)
from callout_server.phrases import screen as screen_rules
from callout_server.phrases import warm
from callout_server.tiers.defaults import THINKING_DEFAULT
from callout_server.tiers.nlu import metrics
from callout_server.tiers.nlu.schemas import AnsweredBy, CarrierStatus, Screened, ScreenRequest
from callout_server.upstream import CallReport, Route, UpstreamError, Upstreams

ANSWERED_BY: tuple[str, ...] = get_args(AnsweredBy)
CARRIER_STATUSES: tuple[str, ...] = get_args(CarrierStatus)
MAX_TOKENS = 40  # {"answered_by": "voicemail", "carrier_status": null} is ~20 tokens

_SYSTEM = (
    "你是电话外呼的接听方识别模块。电话接通后听到的第一句话（语音识别文本，可能是中文或英文）"
    "来自谁？只输出一个 JSON 对象，不要任何其他文字：\n"
    '{"answered_by": "human"|"voicemail"|"carrier"|"ivr"|"unknown", '
    '"carrier_status": null|"powered_off"|"vacant"|"suspended"|"busy"|"unreachable"}\n'
    "- human：真人接听（哪怕提到关机、忙、空号等词，只要是人在说话）\n"
    "- voicemail：语音信箱、留言提示、手机的来电助理/秘书\n"
    "- carrier：运营商提示音（关机 powered_off、空号 vacant、停机 suspended、"
    "正在通话中 busy、暂时无法接通 unreachable；不确定状态填 null）\n"
    "- ivr：企业总机或按键菜单\n"
    "- unknown：无法判断\n"
    "carrier_status 只在 answered_by 为 carrier 时填写，其他情况填 null。"
)


def screen_request(utterance: str) -> LLMRequest:
    return LLMRequest(messages=[{"role": "system", "content": _SYSTEM},
                                {"role": "user", "content": f"接通后听到的第一句话：{utterance}"}],
                      json_mode=True, max_tokens=MAX_TOKENS, temperature=0.0,
                      default_thinking=THINKING_DEFAULT["nlu"])


class ScreenService:
    def __init__(self, upstreams: Upstreams, active_config: Callable[[], LLMConfig | Route],
                 recorder: Recorder = NULL_RECORDER, locale: Locale = "zh") -> None:
        self._upstreams = upstreams
        self._active_config = active_config
        self._recorder = recorder
        self._locale = locale
        warm()  # the Chinese converter built at start-up, not on the first call
        screen_rules("您拨打的电话已关机")  # and the rules' first walk

    async def screen(self, req: ScreenRequest, *, received_at: float | None = None) -> Screened:
        started = time.perf_counter() if received_at is None else received_at
        rule = screen_rules(req.utterance)
        if rule is not None:
            latency = (time.perf_counter() - started) * 1000
            record_rule(self._recorder, "nlu", f"screen.{rule.rule}", call_id=req.call_id,
                        latency_ms=round(latency, 3),
                        args={"answered_by": rule.answered_by,
                              "carrier_status": rule.carrier_status, "cue": rule.cue})
            answer = Screened(answered_by=rule.answered_by, carrier_status=rule.carrier_status,
                              source="rule", latency_ms=round(latency), diagnostic=None)
        else:
            answer = await self._ask_model(req, started)
        metrics.screened(answer.answered_by, answer.carrier_status, answer.source)
        return answer

    async def _ask_model(self, req: ScreenRequest, started: float) -> Screened:
        route = Route.of(self._active_config())
        deadline_s = (req.deadline_ms / 1000) if req.deadline_ms else route.primary.timeout_s
        call = self._upstreams.call(route, deadline_s=deadline_s, started=started)
        llm_req = screen_request(req.utterance)
        if call.deadline.expired():
            report = call.report(call.deadline.exceeded(self._locale, MAX_TOKENS))
        else:
            try:
                served = await call.complete(llm_req)
            except UpstreamError as exc:
                report = exc.report
            else:
                read = self._read(served.value.text, served.value.diagnostic)
                if isinstance(read, Diagnostic):
                    report = served.report.judged(read)
                elif call.deadline.expired():
                    report = served.report.judged(
                        call.deadline.exceeded(self._locale, MAX_TOKENS))
                else:
                    report = served.report.judged(None)
                    record_call(self._recorder, report, "nlu", call_id=req.call_id)
                    return Screened(answered_by=read[0], carrier_status=read[1],
                                    source="model", latency_ms=_ms_since(started),
                                    diagnostic=None)
        return self._fallback(req, report, started)

    def _fallback(self, req: ScreenRequest, report: CallReport, started: float) -> Screened:
        diagnostic = record_call(self._recorder, report, "nlu", call_id=req.call_id)
        assert diagnostic is not None
        return Screened(answered_by="unknown", carrier_status=None, source="fallback",
                        latency_ms=_ms_since(started),
                        diagnostic=diagnostic.to_dict(current(self._locale)))

    def _read(self, text: str, cut: Diagnostic | None
              ) -> tuple[AnsweredBy, CarrierStatus | None] | Diagnostic:
        """(answered_by, carrier_status) from the model's answer, or why there is none."""
        try:
            answer: dict[str, Any] = extract_json_object(text)
        except JSONExtractionError as exc:
            return cut if cut is not None else Diagnostic.make(
                "invalid_json", self._locale, reason=f"json_{exc.reason}")
        who = answer.get("answered_by")
        who = who.strip().lower() if isinstance(who, str) else who
        if who not in ANSWERED_BY:
            return Diagnostic.make("schema_mismatch", self._locale, reason="answered_by_invalid",
                                   args={"value": repr(who)[:60]})
        status = answer.get("carrier_status")
        status = status.strip().lower() if isinstance(status, str) else None
        if who != "carrier" or status not in CARRIER_STATUSES:
            status = None  # a status is only the carrier's, and only one it can say
        return cast("AnsweredBy", who), cast("CarrierStatus | None", status)


def _ms_since(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)
