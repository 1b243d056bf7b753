"""Global intents as live state: config.toml's defaults until a save, the whole list saved
with optimistic locking, audited, tried against the rules, and served by every worker."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from tests.fixtures.database import ADMIN_HEADERS

URL = "/api/admin/nlu/global-intents"


def items(**changes: Any) -> list[dict[str, Any]]:
    return [
        {"name": "opt_out", "description": "不要再打", "action": "end_call", "enabled": True,
         "phrases": ["别再*打电话", "stop calling", "!晚点打"]},
        {"name": "complaint", "description": "", "action": "flag", "enabled": True,
         "phrases": ["投诉", "12315"], **changes},
    ]


async def test_defaults_until_saved_then_the_rows(app_client: httpx.AsyncClient) -> None:
    r = await app_client.get(URL, headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["version"] == 0 and got["updated_by"] is None
    assert [i["name"] for i in got["items"]] == ["opt_out", "complaint", "human_agent"]
    opt_out = got["items"][0]
    assert opt_out["action"] == "end_call" and opt_out["enabled"] is True
    assert "别再*打电话" in opt_out["phrases"] and "stop calling" in opt_out["phrases"]

    r = await app_client.put(URL, headers=ADMIN_HEADERS, json={"items": items(), "version": 0})
    assert r.status_code == 200, r.text
    assert r.json()["version"] == 1 and r.json()["items"] == items()
    assert (await app_client.get(URL, headers=ADMIN_HEADERS)).json()["items"] == items()

    # A stale version changes nothing.
    r = await app_client.put(URL, headers=ADMIN_HEADERS,
                             json={"items": items(enabled=False), "version": 0})
    assert r.status_code == 409 and r.json()["error"]["code"] == "version_conflict"
    assert r.json()["error"]["current_version"] == 1
    assert (await app_client.get(URL, headers=ADMIN_HEADERS)).json()["items"] == items()

    # An empty list is a list: no intent at all (not the defaults back).
    r = await app_client.put(URL, headers=ADMIN_HEADERS, json={"items": [], "version": 1})
    assert r.status_code == 200 and r.json()["items"] == [] and r.json()["version"] == 2

    trail = (await app_client.get("/api/admin/audit", headers=ADMIN_HEADERS,
                                  params={"action": "global_intents.update"})).json()["items"]
    assert [e["detail"]["version"] for e in trail] == [2, 1]
    assert trail[1]["detail"]["names"] == ["opt_out", "complaint"]
    assert trail[1]["detail"]["removed"] == ["human_agent"]


async def test_refused_lists(app_client: httpx.AsyncClient) -> None:
    bad = [
        (items()[:1] * 2, "items"),
        ([{**items()[0], "phrases": ["？！"]}], "items"),
        ([{**items()[0], "action": "hang_up"}], "items.0.action"),
        ([{**items()[0], "name": "有 空格"}], "items.0.name"),
        ([{**items()[0], "phrases": ["x" * 101]}], "items.0.phrases.0"),
    ]
    for body_items, field in bad:
        r = await app_client.put(URL, headers=ADMIN_HEADERS,
                                 json={"items": body_items, "version": 0})
        assert r.status_code == 422, r.text
        assert [f["field"] for f in r.json()["error"]["fields"]] == [field], r.text
    r = await app_client.put(URL, headers=ADMIN_HEADERS,
                             json={"items": [{**items()[0], "phrases": ["？！"]}], "version": 0})
    assert "？！" in r.text  # the message names the phrase
    assert (await app_client.get(URL, headers=ADMIN_HEADERS)).json()["version"] == 0


async def test_try_a_sentence_says_which_phrase_and_what_stopped_it(
        app_client: httpx.AsyncClient) -> None:
    async def tried(utterance: str, **body: Any) -> dict[str, Any]:
        r = await app_client.post(f"{URL}/try", headers=ADMIN_HEADERS,
                                  json={"utterance": utterance, **body})
        assert r.status_code == 200, r.text
        return dict(r.json())

    hit = await tried("你们别再给我打电话了")
    taken = hit["global_intent"]
    assert (taken["intent"], taken["action"]) == ("opt_out", "end_call")
    assert taken["phrase"] in ("别再*打电话", "别*给我打电话")  # as configured, with its `*`
    assert "你们别再给我打电话了"[taken["start"]:taken["end"]] == taken["text"]
    assert taken["text"].endswith("给我打电话")
    no = await tried("我不投诉就问问")
    assert no["global_intent"] is None and no["hits"] == []
    [stop] = no["stopped"]
    assert (stop["intent"], stop["phrase"], stop["reason"], stop["cue"]) == (
        "complaint", "投诉", "negated", "不")
    callback = await tried("别再打了，下周再打吧")
    assert callback["global_intent"] is None
    assert {s["reason"] for s in callback["stopped"]} == {"context"}
    assert (await tried("不需要"))["global_intent"] is None  # a refusal, for the node
    # An unsaved list (the console's form) is tried as given.
    draft = await tried("我要打12315", items=items(enabled=False))
    assert draft["global_intent"] is None
    draft = await tried("我要打12315", items=items())
    assert draft["global_intent"]["intent"] == "complaint"


async def test_viewers_read_and_try_operators_write(people: Any) -> None:
    viewer = await people.as_role("viewer")
    assert (await viewer.get(URL)).status_code == 200
    assert (await viewer.post(f"{URL}/try", json={"utterance": "转人工"})).status_code == 200
    r = await viewer.put(URL, json={"items": items(), "version": 0})
    assert r.status_code == 403
    operator = await people.as_role("operator")
    r = await operator.put(URL, json={"items": items(), "version": 0})
    assert r.status_code == 200 and r.json()["updated_by"] == "operator-user"


async def test_a_save_reaches_every_worker(start_worker: Any) -> None:
    one = await start_worker("one")
    two = await start_worker("two")
    async with httpx.AsyncClient(headers=ADMIN_HEADERS, timeout=30) as c:
        assert (await c.get(f"{two.url}{URL}")).json()["version"] == 0
        r = await c.put(f"{one.url}{URL}", json={"items": items(), "version": 0})
        assert r.status_code == 200, r.text

        async def on_two() -> dict[str, Any]:
            return dict((await c.post(f"{two.url}{URL}/try",
                                      json={"utterance": "我要打12315"})).json())

        deadline = time.monotonic() + 10
        while (await c.get(f"{two.url}{URL}")).json()["version"] != 1:
            assert time.monotonic() < deadline, "the second worker never heard of the save"
            await asyncio.sleep(0.05)
        assert (await on_two())["global_intent"]["intent"] == "complaint"
        assert (await c.get(f"{two.url}{URL}")).json()["items"] == items()
