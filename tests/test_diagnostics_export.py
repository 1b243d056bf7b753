"""`GET /api/admin/diagnostics/export`: the filtered call log as CSV, as ops open it in Excel.

Streamed page by page (each page its own read), bounded by `limit`, newest first, worded in
the reader's language (`lang`, for a download link, or Accept-Language), UTF-8 with a BOM,
and a cell a spreadsheet would run as a formula is defused.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
import pytest

from callout_server.calllog import service
from callout_server.calllog.records import CallRecord
from callout_server.calllog.repository import RECORD_FIELDS
from callout_server.llm import Diagnostic
from tests.fixtures.database import ADMIN_HEADERS, EN, SERVICE_HEADERS, ZH

EXPORT = "/api/admin/diagnostics/export"


async def _seed(client: httpx.AsyncClient) -> list[int]:
    recorder = client.services.recorder  # type: ignore[attr-defined]
    truncated = Diagnostic.make("truncated_by_reasoning", max_tokens=300, reasoning_tokens=300,
                                finish_reason="length")
    ids = []
    for i in range(7):
        ids.append(recorder.record(CallRecord.from_diagnostic(
            "nlu", truncated, call_id=f"c{i}", node_id="confirm", latency_ms=10.0 + i)))
    ids.append(recorder.record(CallRecord(tier="chat", code="ok", call_id="chat-1")))
    ids.append(recorder.record(CallRecord(tier="nlu", code="ok", call_id="=HYPERLINK(1)")))
    await recorder.flush()
    return ids


def _rows(r: httpx.Response) -> list[dict[str, str]]:
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "text/csv; charset=utf-8"
    assert r.headers["content-disposition"].startswith('attachment; filename="diagnostics-')
    text = r.content.decode("utf-8")
    assert text.startswith("\ufeff")  # Excel reads UTF-8 (Chinese) only with the BOM
    reader = csv.DictReader(io.StringIO(text[1:]))
    assert tuple(reader.fieldnames or ()) == RECORD_FIELDS
    return list(reader)


async def test_the_filtered_records_as_csv_in_the_readers_language(
        app_client: httpx.AsyncClient) -> None:
    ids = await _seed(app_client)
    rows = _rows(await app_client.get(EXPORT, params={"code": "truncated_by_reasoning"},
                                      headers={**ADMIN_HEADERS, **EN}))
    assert [int(r["id"]) for r in rows] == sorted(ids[:7], reverse=True)  # newest first
    first = rows[0]
    assert (first["tier"], first["call_id"], first["max_tokens"]) == ("nlu", "c6", "300")
    assert first["message"].startswith("The output hit the max_tokens limit (300)")
    assert first["at"].endswith("Z") and first["status"] == ""  # absent numbers are empty
    # zh from the header, or from `lang` (a download link sends no header)
    for params, headers in (({}, ZH), ({"lang": "zh"}, EN)):
        zh = _rows(await app_client.get(EXPORT, params={"code": "truncated_by_reasoning",
                                                        **params},
                                        headers={**ADMIN_HEADERS, **headers}))
        assert zh[0]["message"].startswith("模型输出触顶 max_tokens 限制 (300)")
    every = _rows(await app_client.get(EXPORT, headers=ADMIN_HEADERS))
    assert len(every) == 9
    chat = _rows(await app_client.get(EXPORT, params={"tier": "chat"}, headers=ADMIN_HEADERS))
    assert [r["call_id"] for r in chat] == ["chat-1"]
    injected = next(r for r in every if "HYPERLINK" in r["call_id"])
    assert injected["call_id"] == "'=HYPERLINK(1)"  # never run as a formula
    nothing = _rows(await app_client.get(EXPORT, params={"call_id": "none"},
                                         headers=ADMIN_HEADERS))
    assert nothing == []  # the header row alone


async def test_an_export_is_streamed_page_by_page_and_bounded(
        app_client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = await _seed(app_client)
    monkeypatch.setattr(service, "EXPORT_PAGE", 2)  # 9 records: five reads of two
    reads: list[Any] = []
    real = service.repository.list_records

    async def counted(*args: Any, **kw: Any) -> Any:
        reads.append(kw["limit"])
        return await real(*args, **kw)

    monkeypatch.setattr(service.repository, "list_records", counted)
    rows = _rows(await app_client.get(EXPORT, headers=ADMIN_HEADERS))
    assert [int(r["id"]) for r in rows] == sorted(ids, reverse=True)
    assert reads == [2, 2, 2, 2, 2]
    reads.clear()
    rows = _rows(await app_client.get(EXPORT, params={"limit": 5}, headers=ADMIN_HEADERS))
    assert [int(r["id"]) for r in rows] == sorted(ids, reverse=True)[:5]
    assert reads == [2, 2, 1]  # never more than asked for
    r = await app_client.get(EXPORT, params={"limit": 100_001}, headers={**ADMIN_HEADERS, **EN})
    assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "limit"


async def test_viewers_may_export_dialers_may_not(app_client: httpx.AsyncClient,
                                                  people: Any) -> None:
    await _seed(app_client)
    viewer = await people.as_role("viewer")
    assert len(_rows(await viewer.get(EXPORT))) == 9
    assert (await app_client.get(EXPORT, headers=SERVICE_HEADERS)).status_code == 403
    assert (await app_client.get(EXPORT)).status_code == 401
