"""A vendor is one row: every dialect row is reachable, listed, and has test vectors.

Adding a vendor to `callout_server/llm/dialects.py` must need nothing else than its row and
its vectors in tests/data/vendor_vectors.py: the request body, the reading of the reply, the
console's list and configuration validation all follow from the row. The second half pins
the response side the rows now drive (formerly a fixed field list and a model-name regex).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from callout_server.config.schemas import check_base_url
from callout_server.llm import DIALECTS, LLMConfig, LLMRequest, ReasoningDelta, TextDelta
from callout_server.llm.adapters import make_adapter
from callout_server.llm.dialects import detect_dialect
from callout_server.llm.request_body import build_request
from tests.data.vendor_vectors import ANSWER, COT, VECTORS
from tests.fixtures.database import ADMIN_HEADERS, SERVICE_HEADERS, llm_config_body

MESSAGES = [{"role": "user", "content": "明天下午三点以后都可以"}]
ROWS = sorted(DIALECTS)


def cfg(name: str, **kw: Any) -> LLMConfig:
    v = VECTORS[name]
    return LLMConfig(tier="t", name="v", base_url=v.base_url, model=v.model, vendor=name, **kw)


def text_and_reasoning(events: list[Any]) -> tuple[str, str]:
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    return text, "".join(e.text for e in events if isinstance(e, ReasoningDelta))


def test_every_row_has_vectors_and_no_vector_is_stale() -> None:
    assert set(VECTORS) == set(DIALECTS)


@pytest.mark.parametrize("name", ROWS)
def test_row_is_reachable_by_explicit_name_and_detected_where_it_says(name: str) -> None:
    v = VECTORS[name]
    built = build_request(cfg(name), LLMRequest(messages=MESSAGES), stream=True)
    assert built.dialect == name and not built.notes
    # An explicit name wins over any URL; detection from the URL alone where the row has it.
    assert build_request(
        LLMConfig(tier="t", name="v", base_url="http://127.0.0.1:1/v1", model=v.model,
                  vendor=name.upper()), LLMRequest(messages=MESSAGES), stream=True,
    ).dialect == name
    assert (detect_dialect(v.base_url).name == name) is v.detected


@pytest.mark.parametrize("name", ROWS)
def test_a_vendors_preset_base_url_is_valid_and_leads_back_to_it(name: str) -> None:
    """The console's presets fill the base URL from the row: one the admin API takes, and
    a hosted vendor's is recognised as that vendor again."""
    row = DIALECTS[name]
    if row is DIALECTS["selfhosted"]:
        assert row.base_url == ""  # no one place to point at
        return
    assert check_base_url(row.base_url) == row.base_url
    if VECTORS[name].detected:
        assert detect_dialect(row.base_url).name == name


@pytest.mark.parametrize("name", ROWS)
@pytest.mark.parametrize("thinking", [False, True])
def test_request_body_vector(name: str, thinking: bool) -> None:
    v = VECTORS[name]
    req = LLMRequest(messages=copy.deepcopy(MESSAGES), default_thinking=thinking)
    body = build_request(cfg(name), req, stream=True).body
    assert body == {"model": v.model, "messages": MESSAGES, "stream": True,
                    "stream_options": {"include_usage": True}, v.budget_key: 300,
                    **(v.on if thinking else v.off), **v.extra}


@pytest.mark.parametrize("name", ROWS)
@pytest.mark.parametrize("stream", [False, True])
def test_reply_vector_is_read_as_the_vendor_documents(name: str, stream: bool) -> None:
    v = VECTORS[name]
    row = DIALECTS[name]
    adapter = make_adapter("chat-completions", v.model, row)
    if stream:  # the same message as deltas, content in small pieces
        message = dict(v.reply)
        content = message.pop("content")
        chunks = [{"choices": [{"index": 0, "delta": message}]}]
        chunks += [{"choices": [{"index": 0, "delta": {"content": content[i:i + 3]}}]}
                   for i in range(0, len(content), 3)]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        events = [e for chunk in chunks for e in adapter.feed(chunk)] + adapter.close()
    else:
        events = adapter.parse({"choices": [{"message": v.reply, "finish_reason": "stop"}]})
    text, reasoning = text_and_reasoning(events)
    assert text == ANSWER
    assert reasoning == v.reasoning


# -- the response side follows the row ---------------------------------------------------


def test_hosted_vendor_never_holds_back_text_for_a_preopening_model_family() -> None:
    # QwQ / *-thinking-2507 / DeepSeek-R1 on DashScope, SiliconFlow, Ark, OpenRouter return
    # their reasoning in a field; only a server without a reasoning parser pre-opens <think>.
    # The old model-name rule held every streamed token back until the end for them.
    hosted = make_adapter("chat-completions", "qwq-plus", DIALECTS["dashscope"])
    assert hosted.feed({"choices": [{"delta": {"reasoning_content": COT}}]}) == [
        ReasoningDelta(COT)]
    assert hosted.feed({"choices": [{"delta": {"content": "好的"}}]}) == [TextDelta("好的")]
    self_hosted = make_adapter("chat-completions", "QwQ-32B", DIALECTS["vllm"])
    assert self_hosted.feed({"choices": [{"delta": {"content": "想"}}]}) == []  # undecided
    assert self_hosted.feed({"choices": [{"delta": {"content": "</think>好的"}}]}) == [
        ReasoningDelta("想"), TextDelta("好的")]


def test_cut_answer_of_a_hosted_preopening_family_stays_an_answer() -> None:
    body = {"choices": [{"message": {"content": "好的，明天", "reasoning_content": COT},
                         "finish_reason": "length"}]}
    events = make_adapter("chat-completions", "deepseek-r1", DIALECTS["siliconflow"]).parse(body)
    assert text_and_reasoning(events) == ("好的，明天", COT)


def test_vendor_without_inline_reasoning_keeps_tag_like_text() -> None:
    body = {"choices": [{"message": {"content": "用 <think> 标签包住推理"},
                         "finish_reason": "stop"}]}
    events = make_adapter("chat-completions", "gpt-4.1", DIALECTS["openai"]).parse(body)
    assert text_and_reasoning(events) == ("用 <think> 标签包住推理", "")


def test_only_the_rows_reasoning_fields_are_read() -> None:
    message = {"content": ANSWER, "reasoning": "r", "reasoning_content": "rc"}
    body = {"choices": [{"message": message, "finish_reason": "stop"}]}
    read = {name: text_and_reasoning(make_adapter("chat-completions", "m", DIALECTS[name])
                                     .parse(copy.deepcopy(body)))[1]
            for name in ("deepseek", "openrouter", "openai", "vllm")}
    assert read == {"deepseek": "rc", "openrouter": "r", "openai": "", "vllm": "r"}


# -- the console's list and validation ------------------------------------------------------


async def test_vendors_route_lists_every_row(app_client) -> None:
    r = await app_client.get("/api/admin/vendors", headers=ADMIN_HEADERS)
    assert r.status_code == 200
    items = {item["name"]: item for item in r.json()["items"]}
    assert list(items) == list(DIALECTS)  # detection order, `selfhosted` last
    assert items["deepseek"] == {
        "name": "deepseek", "display_name": "DeepSeek", "thinking_switch": True,
        "reasoning_effort": ["minimal", "low", "medium", "high", "xhigh", "max"],
        "detected_by": {"hosts": ["api.deepseek.com"], "host_contains": [],
                        "url_contains": [], "ports": [], "fallback": False},
        "base_url": "https://api.deepseek.com/v1"}
    assert items["selfhosted"]["detected_by"]["fallback"] is True
    assert items["anthropic"]["thinking_switch"] is False
    assert items["anthropic"]["reasoning_effort"] == []  # never sent
    assert items["vllm"]["reasoning_effort"] is None  # passed through unchecked
    assert (await app_client.get("/api/admin/vendors")).status_code == 401
    assert (await app_client.get("/api/admin/vendors", headers=SERVICE_HEADERS)).status_code == 403


async def test_unknown_vendor_is_rejected_on_create_and_update(app_client) -> None:
    url = "/api/admin/llm-configs"
    r = await app_client.post(url, json=llm_config_body(vendor="qwen"), headers=ADMIN_HEADERS)
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["code"] == "validation_error"
    assert [f["field"] for f in error["fields"]] == ["vendor"]
    assert "qwen" in error["fields"][0]["message"] and "dashscope" in error["fields"][0]["message"]
    created = await app_client.post(url, json=llm_config_body(vendor="dashscope"),
                                    headers=ADMIN_HEADERS)
    assert created.status_code == 201 and created.json()["vendor"] == "dashscope"
    cid, version = created.json()["id"], created.json()["version"]
    r = await app_client.put(f"{url}/{cid}", json={"version": version, "vendor": "deepsea"},
                             headers=ADMIN_HEADERS)
    assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "vendor"
    kept = (await app_client.get(f"{url}/{cid}", headers=ADMIN_HEADERS)).json()
    assert kept["vendor"] == "dashscope" and kept["version"] == version  # nothing written
    cleared = await app_client.put(f"{url}/{cid}", json={"version": version, "vendor": None},
                                   headers=ADMIN_HEADERS)
    assert cleared.status_code == 200 and cleared.json()["vendor"] is None


def test_config_toml_vendor_is_checked_at_start_up(tmp_path: Any) -> None:
    from callout_server.config.settings import ConfigFileError, load_settings

    path = tmp_path / "config.toml"
    sections = "".join(f'[llm.{tier}]\nbase_url = "http://127.0.0.1:8900/v1"\nmodel = "m"\n'
                       for tier in ("nlu", "chat", "script"))
    path.write_text(sections.replace("[llm.nlu]\n", '[llm.nlu]\nvendor = "${NLU_VENDOR:-}"\n'))
    assert load_settings(path, env={}).file_llm_configs["nlu"].vendor is None  # blank: unset
    ok = load_settings(path, env={"NLU_VENDOR": " DeepSeek "})
    assert ok.file_llm_configs["nlu"].vendor == "deepseek"
    with pytest.raises(ConfigFileError) as info:
        load_settings(path, env={"NLU_VENDOR": "deepsea"})
    assert "llm.nlu.vendor" in str(info.value) and "deepsea" in str(info.value)
