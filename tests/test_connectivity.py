"""Test connection: separate checks with their own verdicts, and only actionable findings.

Against the real emulator process, on PostgreSQL. A healthy configuration must come back
clean even though the test caps its own output far below the operator's max_tokens.
"""

from __future__ import annotations

from typing import Any

import pytest

from callout_server.connectivity.checks import Probe, judge
from callout_server.llm import Diagnostic
from tests.fixtures.app import free_port
from tests.fixtures.database import ADMIN_HEADERS, llm_config_body

URL = "/api/admin/llm-configs"
LONG = "好的，我明白您的意思了。我们会尽快安排专人跟进您的需求。请问还有其他可以帮您的吗？"


async def _test(client, **fields: Any) -> dict[str, Any]:
    created = await client.post(URL, json=llm_config_body(**fields), headers=ADMIN_HEADERS)
    assert created.status_code == 201, created.text
    r = await client.post(f"{URL}/{created.json()['id']}/test", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _checks(result: dict[str, Any]) -> dict[str, tuple[str, str]]:
    assert [c["name"] for c in result["checks"]] == [
        "reachable", "auth", "model", "thinking", "answer"]
    return {c["name"]: (c["status"], c["code"]) for c in result["checks"]}


def _check(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in result["checks"] if c["name"] == name)


async def test_healthy_config_has_no_warning_from_the_tests_own_cap(app_client, emulator) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    await emulator.script(model, {"content": LONG})  # far more than the test's 16 tokens
    result = await _test(app_client, model=model, base_url=emulator.base_url("vllm"),
                         max_tokens=300)
    assert result["ok"] is True and result["diagnostic"] is None, result
    assert result["thinking_suppressed"] is True and result["test_max_tokens"] == 16
    assert _checks(result) == {
        "reachable": ("ok", "answered"), "auth": ("ok", "not_required"),
        "model": ("ok", "served"), "thinking": ("ok", "suppressed"),
        "answer": ("ok", "cut_at_test_cap")}
    assert _check(result, "answer")["values"] == {
        "chars": _check(result, "answer")["values"]["chars"], "test_max_tokens": 16,
        "max_tokens": 300}
    sent = await emulator.requests(model)
    assert sent[-1]["body"]["max_tokens"] == 16


async def test_the_operators_own_small_budget_is_a_finding(app_client, emulator) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    await emulator.script(model, {"content": LONG})
    result = await _test(app_client, model=model, base_url=emulator.base_url("vllm"),
                         max_tokens=8)
    assert result["ok"] is True and result["test_max_tokens"] == 8
    assert _checks(result)["answer"] == ("warn", "truncated")
    assert result["diagnostic"]["code"] == "truncated" and result["diagnostic"]["max_tokens"] == 8


async def test_reasoning_that_comes_back_despite_suppression_is_a_warning(
        app_client, emulator) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "pong", "reasoning": "The user says ping.",
                                  "reasoning_tokens": 7})
    result = await _test(app_client, model=model, base_url=emulator.base_url("deepseek"),
                         api_key="sk-test-0123456789abcdef")
    assert result["ok"] is True and result["thinking_suppressed"] is False
    checks = _checks(result)
    assert checks["thinking"] == ("warn", "not_suppressed")
    assert checks["auth"] == ("ok", "accepted") and checks["answer"] == ("ok", "answered")
    assert _check(result, "thinking")["values"]["reasoning_seen"] is True


async def test_rejected_key_fails_auth_and_skips_the_rest(app_client, emulator) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    await emulator.script(model, {"status": 401, "error_body": {"error": {
        "message": "Incorrect API key provided", "type": "invalid_request_error"}}})
    result = await _test(app_client, model=model, base_url=emulator.base_url("vllm"),
                         api_key="sk-wrong-0123456789abcdef")
    assert result["ok"] is False and result["diagnostic"]["status"] == 401
    assert _checks(result) == {
        "reachable": ("ok", "answered"), "auth": ("fail", "rejected"),
        "model": ("skipped", "not_run"), "thinking": ("skipped", "not_run"),
        "answer": ("skipped", "not_run")}


async def test_unknown_model_fails_the_model_check(app_client, emulator) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    await emulator.script(model, {"status": 404, "error_body": {"object": "error",
        "message": f"The model `{model}` does not exist.", "type": "NotFoundError"}})
    result = await _test(app_client, model=model, base_url=emulator.base_url("vllm"))
    checks = _checks(result)
    assert result["ok"] is False and checks["model"] == ("fail", "not_found")
    assert checks["reachable"] == ("ok", "answered") and checks["answer"] == ("skipped", "not_run")
    assert _check(result, "model")["values"]["configured"] == model


async def test_a_404_not_about_the_model_is_a_wrong_base_url(app_client, emulator) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    await emulator.script(model, {"status": 404, "error_body": "404: Not Found"})
    result = await _test(app_client, model=model, base_url=emulator.base_url("vllm"))
    assert result["ok"] is False and _checks(result)["reachable"] == ("fail", "not_found")


async def test_unreachable_endpoint_fails_reachability(app_client) -> None:
    result = await _test(app_client, base_url=f"http://127.0.0.1:{free_port()}/v1")
    assert result["ok"] is False and result["diagnostic"]["code"] == "connect_error"
    checks = _checks(result)
    assert checks["reachable"] == ("fail", "connect_error")
    assert {s for s, _ in list(checks.values())[1:]} == {"skipped"}


async def test_server_error_fails_the_answer_check(app_client, emulator) -> None:
    model = emulator.unique_model("qwen3.5-2b")
    await emulator.script(model, {"status": 503})
    result = await _test(app_client, model=model, base_url=emulator.base_url("vllm"))
    checks = _checks(result)
    assert result["ok"] is False and checks["answer"] == ("fail", "upstream_error")
    assert checks["auth"] == ("ok", "not_required") and checks["thinking"][0] == "skipped"


async def test_reasoning_filling_the_tests_cap_is_no_finding(app_client, emulator) -> None:
    """A thinking model may reason past the test's 512 tokens: that says nothing about 3000."""
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "", "reasoning": "思考" * 40,
                                  "reasoning_tokens": 512, "finish_reason": "length"})
    result = await _test(app_client, tier="script", model=model, max_tokens=3000,
                         base_url=emulator.base_url("vllm"))
    assert result["ok"] is True and result["diagnostic"] is None, result
    assert result["test_max_tokens"] == 512 and result["thinking_suppressed"] is None
    checks = _checks(result)
    assert checks["answer"] == ("info", "reasoning_used_test_cap")
    assert checks["thinking"] == ("info", "vendor_default")


async def test_reasoning_filling_the_operators_budget_is_a_failure(app_client, emulator) -> None:
    model = emulator.unique_model("qwen3-8b")
    await emulator.script(model, {"content": "", "reasoning": "思考" * 40,
                                  "reasoning_tokens": 200, "finish_reason": "length"})
    result = await _test(app_client, tier="script", model=model, max_tokens=200,
                         base_url=emulator.base_url("vllm"))
    assert result["ok"] is False
    assert _checks(result)["answer"] == ("fail", "truncated_by_reasoning")
    assert result["diagnostic"]["code"] == "truncated_by_reasoning"
    assert result["diagnostic"]["max_tokens"] == 200


PROBE = Probe(model="m", has_key=True, max_tokens=300, test_max_tokens=16, thinking=False)


@pytest.mark.parametrize(("status", "detail", "failed"), [
    (404, "The model `m` does not exist.", ("model", "not_found")),
    (400, "Model not exist.", ("model", "not_found")),                       # DashScope
    (400, "模型不存在，请检查模型代码。", ("model", "not_found")),              # Z.AI
    (404, 'model "m" not found, try pulling it first', ("model", "not_found")),  # Ollama
    # A refused parameter that names the model is not a missing model.
    (400, "Unsupported parameter: 'temperature' is not supported with this model.",
     ("answer", "upstream_error")),
    (404, "404 page not found", ("reachable", "not_found")),
    (429, "Rate limit reached", ("answer", "upstream_error")),
    (403, "forbidden", ("auth", "rejected")),
])
def test_which_check_a_vendor_error_fails(status: int, detail: str, failed: tuple[str, str]) -> None:
    verdict = judge(Diagnostic.make("upstream_error", status=status, detail=detail), PROBE)
    bad = [(c.name, c.code) for c in verdict.checks if c.status == "fail"]
    assert bad == [failed] and verdict.ok is False and verdict.diagnostic is not None


async def test_an_answer_past_the_tiers_size_cap_fails_the_test_and_the_call(
        make_settings, pg_url, emulator, upstream) -> None:
    # A server that ignores max_tokens (the test asks for 16) and answers 600 KB.
    from tests.fixtures.upstream import json_reply
    from tests.support.nlu import decide, nlu_app

    upstream.reply = json_reply({"choices": [{"message": {"content": "好" * 100_000},
                                              "finish_reason": "stop"}]})
    async with nlu_app(make_settings, pg_url, emulator, "qwen3.5-2b", base_url=upstream.base_url,
                       **{"limits.nlu.max_response_bytes": 65536}) as client:
        result = await _test(client, base_url=upstream.base_url)
        assert result["ok"] is False
        answer = _check(result, "answer")
        assert (answer["status"], answer["code"]) == ("fail", "response_too_large")
        d = result["diagnostic"]
        assert d["code"] == "response_too_large" and "65536" in d["message"]
        r, _ = await decide(client)
        assert r.status_code == 502 and r.json()["error"]["code"] == "response_too_large"
