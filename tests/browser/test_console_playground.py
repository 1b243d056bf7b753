"""The playground tries any configuration of the tier, with deadline, context and instructions,
copies the call as curl (on every tab: the commands run as they are shown), and records it as `source: "playground"` (Chromium, real server,
both languages)."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import login, shot
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body

LABELS = {
    "zh": {"config": "配置", "deadline": "截止时间（毫秒）", "context": "上下文",
           "instructions": "附加指令", "decide": "识别", "curl": "复制为 curl",
           "range": "请填写 50 到 120000 之间的整数。", "turn": "坐席：您明天下午方便吗？",
           "copied": ("已复制", "浏览器不允许")},
    "en": {"config": "Configuration", "deadline": "Deadline (ms)", "context": "Context",
           "instructions": "Instructions", "decide": "Decide", "curl": "Copy as curl",
           "range": "Enter a whole number from 50 to 120000.",
           "turn": "agent: Is tomorrow afternoon convenient?", "copied": ("Copied", "refused")},
}


def _records(base: str, **params: Any) -> list[dict[str, Any]]:
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=10) as admin:
        return list(admin.get("/api/admin/diagnostics", params=params).json()["items"])


def _wait_records(base: str, count: int, **params: Any) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 15
    while True:  # the call log is written in the background
        found = _records(base, **params)
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _calls(shown: str) -> list[tuple[str, dict[str, Any], bool]]:
    """(URL, body, streamed) of each curl command shown, as a shell would send them."""
    calls = []
    for command in shown.split("\n\n"):
        url = command.split("-X POST '", 1)[1].split("'", 1)[0]
        body = json.loads(command.split("-d '", 1)[1].rsplit("'", 1)[0].replace("'\\''", "'"))
        assert "$CALLOUT_SERVICE_TOKEN" in command, command
        streamed = " -N " in command
        assert streamed == ("Accept: text/event-stream" in command), command
        calls.append((url, body, streamed))
    return calls


def _run(calls: list[tuple[str, dict[str, Any], bool]]) -> list[httpx.Response]:
    """Each call sent with the service token; a streamed one read to its end."""
    answers = []
    with httpx.Client(headers=SERVICE_HEADERS, timeout=30) as dialer:
        for url, body, streamed in calls:
            headers = {"Accept": "text/event-stream"} if streamed else {}
            answers.append(dialer.post(url, json=body, headers=headers))
    return answers


def _try_out(page: Any, lang: str, name: str) -> None:
    words = LABELS[lang]
    panel = page.locator("[role=tabpanel]:visible")  # the NLU tab (each tab has a picker)
    panel.get_by_label(words["config"], exact=True).select_option(label=name)
    panel.get_by_label(words["deadline"]).fill("10")
    panel.get_by_role("button", name=words["decide"]).click()
    expect(page.locator(".field-error:visible")).to_have_text(words["range"])
    panel.get_by_label(words["deadline"]).fill("8000")
    panel.get_by_label(words["context"]).fill(words["turn"])
    panel.get_by_label(words["instructions"]).fill("只判断是否同意")
    panel.get_by_role("button", name=words["decide"]).click()
    expect(page.get_by_test_id("nlu-json")).to_contain_text('"intent": "agree"', timeout=30_000)
    panel.get_by_role("button", name=words["curl"]).click()
    curl = panel.get_by_test_id("pg-curl")
    expect(curl).to_be_visible()
    command = curl.inner_text()
    assert "/api/nlu/decide" in command and "$CALLOUT_SERVICE_TOKEN" in command, command
    body = json.loads(command.split("-d '", 1)[1].rsplit("'", 1)[0].replace("'\\''", "'"))
    assert body["deadline_ms"] == 8000 and body["instructions"] == "只判断是否同意"
    assert body["context"][0]["role"] == "assistant", body
    note = panel.locator(".form-actions [role=status]").first
    expect(note).not_to_be_empty()  # said once the clipboard has answered
    assert note.inner_text().startswith(words["copied"]), note.inner_text()


def test_the_playground_tries_another_configuration_in_both_languages(
        page: Any, console_server: str, emulator: Any) -> None:
    base = console_server
    model = emulator.unique_model("qwen3.5-2b")
    emulator.script_sync(model, {"content": '{"intent": "agree", "confidence": 0.9, "slots": {}}'})
    with httpx.Client(base_url=base, headers=ADMIN_HEADERS, timeout=10) as admin:
        r = admin.post("/api/admin/llm-configs", json=llm_config_body(
            tier="nlu", model=model, name="pg-candidate", base_url=emulator.base_url("vllm")))
        assert r.status_code == 201, r.text
        candidate = r.json()["id"]
        chat_model = emulator.unique_model("qwen3.5-2b")
        emulator.script_sync(chat_model, {"content": "您好，请问有什么可以帮您？",
                                          "token_delay_ms": 0, "ttft_ms": 0})
        r = admin.post("/api/admin/llm-configs", json=llm_config_body(
            tier="chat", model=chat_model, name="pg-chat-candidate", max_tokens=200,
            base_url=emulator.base_url("vllm")))
        assert r.status_code == 201, r.text
        chat_candidate = r.json()["id"]
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    login(page, base, route="/ai/playground")
    _try_out(page, "zh", f"pg-candidate · {model}")
    shot(page, "real-10-playground-config-zh", full_page=True)

    # The chat tab: a session on another chat configuration.
    page.get_by_role("tab", name="流式对话").click()
    panel = page.locator("[role=tabpanel]:visible")
    panel.get_by_label("配置", exact=True).select_option(label=f"pg-chat-candidate · {chat_model}")
    panel.get_by_role("button", name="开始会话").click()
    panel.get_by_test_id("chat-session").filter(has_text="playground-").wait_for()
    panel.get_by_label("你的消息").fill("你好")
    panel.get_by_role("button", name="发送").click()
    panel.locator("[data-testid=turn-end][data-reason=completed]").last.wait_for(timeout=30_000)
    chats = _wait_records(base, 1, source="playground", model=chat_model)
    assert [r["config_id"] for r in chats] == [chat_candidate], chats
    # The dialer's two calls for a new phone call: open its session, then a streamed turn.
    panel.get_by_role("button", name="复制为 curl").click()
    session, turn = _calls(panel.get_by_test_id("pg-curl").inner_text())
    assert session[0].endswith("/api/chat/sessions") and not session[2]
    assert turn[0] == f"{session[0]}/{session[1]['call_id']}/turns" and turn[2]
    panel.get_by_label("你的消息").fill("订单到哪了")  # what is typed is what the turn says
    panel.get_by_role("button", name="复制为 curl").click()
    session, turn = _calls(panel.get_by_test_id("pg-curl").inner_text())
    assert turn[1]["text"] == "订单到哪了" and turn[1]["output"] == "audio"
    opened, turned = _run([session, turn])
    assert opened.status_code == 201, opened.text
    assert turned.status_code == 200 and "event: end" in turned.text, turned.text

    # The script tab: one streamed call to the dialer's route.
    page.get_by_role("tab", name="话术生成").click()
    panel = page.locator("[role=tabpanel]:visible")
    panel.get_by_role("button", name="复制为 curl").click()
    [script] = _calls(panel.get_by_test_id("pg-curl").inner_text())
    assert script[0].endswith("/api/scripts/generate") and script[2]
    assert script[1]["stream"] is True and script[1]["brief"]
    [generated] = _run([script])
    assert generated.status_code == 200 and "event: end" in generated.text, generated.text
    page.get_by_role("tab", name="NLU 决策").click()

    page.get_by_role("button", name="English").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.goto(f"{base}/admin#/ai/playground")
    _try_out(page, "en", f"pg-candidate · {model}")
    shot(page, "real-10-playground-config-en", full_page=True)

    played = [r for r in _wait_records(base, 2, source="playground", model=model)]
    assert [r["config_id"] for r in played] == [candidate, candidate], played
    assert _records(base, source="live", model=model) == []  # never live traffic
    assert page.errors == []
