"""An in-memory stand-in for callout-server's HTTP contract, serving the real console.

Used by the browser tests to drive every console flow without a model, a database or the
backend being finished (`test_console_contract.py`), and for a quick look at the UI:

    .venv/bin/python -m uvicorn tests.browser.fake_backend:app --port 8088
    open http://127.0.0.1:8088/admin   (admin / admin-pass-123)

It follows /work/shared/spec/http-api.md; it is not a reference implementation.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from callout_server.api.console import mount_console
from callout_server.config.vendors import VENDORS

USER, PASSWORD = "admin", "admin-pass-123"
WRITABLE = ("tier", "name", "base_url", "model", "api_style", "timeout_s", "max_tokens", "temperature",
            "enable_thinking", "reasoning_effort", "extra_params", "vendor")


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def err(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)


def mask(key: str) -> str:
    if not key:
        return ""
    if len(key) < 12:
        return "****"
    prefix = next((p for p in ("gpustack_", "sk-") if key.startswith(p)), "")
    return f"{prefix}{key[len(prefix):len(prefix) + 4]}****{key[-4:]}"


class State:
    def __init__(self) -> None:
        self.sessions: dict[str, str] = {}  # cookie -> csrf
        self.configs: dict[int, dict[str, Any]] = {}
        self.keys: dict[int, str] = {}
        self.revisions: dict[int, list[dict[str, Any]]] = {}
        self.next_id = 1
        self.chat: dict[str, dict[str, Any]] = {}
        self.diags = self._seed_diagnostics()

    def _seed_diagnostics(self) -> list[dict[str, Any]]:
        base = datetime.now(UTC)
        rows = []
        codes = ["ok"] * 6 + ["truncated_by_reasoning", "ok", "timeout", "ok", "truncated", "invalid_json", "ok", "upstream_error"]
        for i, code in enumerate(codes * 3):
            tier = ("nlu", "chat", "script")[i % 3]
            trunc = code.startswith("truncated")
            rows.append({
                "id": 1000 + i, "at": (base - timedelta(minutes=3 * i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "tier": tier, "config_id": 1, "model": "qwen3.5-2b" if tier != "script" else "qwen3.6-27b-fp8",
                "vendor": "gpustack", "code": code,
                "message": ("模型输出触顶 max_tokens 限制 (300) 导致截断，未生成有效 JSON 内容。模型思考链消耗了过多 token"
                            if code == "truncated_by_reasoning" else "输出被 max_tokens 截断" if code == "truncated"
                            else None if code == "ok" else f"{code} from upstream"),
                "advice": ("调大 max_tokens 或关闭思考模式" if code == "truncated_by_reasoning"
                           else "调大 max_tokens" if code == "truncated" else None),
                "finish_reason": "length" if trunc else "stop", "latency_ms": 300 + 37 * i, "ttft_ms": 120 + i,
                "prompt_tokens": 220, "completion_tokens": 300 if trunc else 40, "reasoning_tokens": 300 if code == "truncated_by_reasoning" else 0,
                "max_tokens": 300, "call_id": f"c-20261129-{i:04d}", "node_id": "confirm_time",
            })
        return rows

    def public(self, cid: int) -> dict[str, Any]:
        c = dict(self.configs[cid])
        key = self.keys.get(cid, "")
        c["api_key_masked"] = mask(key)
        c["has_api_key"] = bool(key)
        return c


S = State()
app = FastAPI(title="callout-server (fake for console tests)")


@app.middleware("http")
async def auth_guard(request: Request, call_next):  # type: ignore[no-untyped-def]
    path = request.url.path
    if path.startswith("/api/") and path != "/api/auth/login":
        cookie = request.cookies.get("callout_session")
        if not cookie or cookie not in S.sessions:
            return err(401, "unauthorized", "login required")
        if request.method not in ("GET", "HEAD") and request.headers.get("x-csrf-token") != S.sessions[cookie]:
            return err(403, "csrf_failed", "missing or wrong X-CSRF-Token")
    return await call_next(request)


@app.post("/api/auth/login")
async def login(request: Request) -> Response:
    body = await request.json()
    if body.get("username") != USER or body.get("password") != PASSWORD:
        return err(401, "invalid_credentials", "wrong username or password")
    sid = secrets.token_urlsafe(16)
    S.sessions[sid] = secrets.token_urlsafe(16)
    resp = Response(status_code=204)
    resp.set_cookie("callout_session", sid, httponly=True, samesite="strict", path="/")
    return resp


@app.post("/api/auth/logout")
async def logout(request: Request) -> Response:
    S.sessions.pop(request.cookies.get("callout_session", ""), None)
    resp = Response(status_code=204)
    resp.delete_cookie("callout_session", path="/")
    return resp


@app.get("/api/auth/me")
async def me(request: Request) -> dict[str, Any]:
    return {"username": USER, "role": "admin", "csrf_token": S.sessions[request.cookies["callout_session"]]}


def validate(body: dict[str, Any], partial: bool = False) -> JSONResponse | None:
    fields = []
    for k in ("name", "base_url", "model"):
        if not partial and not str(body.get(k) or "").strip():
            fields.append({"field": k, "message": "Field required"})
    if body.get("base_url") and not str(body["base_url"]).startswith(("http://", "https://")):
        fields.append({"field": "base_url", "message": "URL must start with http:// or https://"})
    mt = body.get("max_tokens")
    if mt is not None and (not isinstance(mt, int) or mt < 1 or mt > 200_000):
        fields.append({"field": "max_tokens", "message": "Input should be between 1 and 200000"})
    if body.get("tier") not in ("nlu", "chat", "script"):
        fields.append({"field": "tier", "message": "Input should be 'nlu', 'chat' or 'script'"})
    if fields:
        return err(422, "validation_error", "invalid request: " + "; ".join(f"{f['field']}: {f['message']}" for f in fields), fields=fields)
    return None


def revise(cid: int, action: str, changes: dict[str, Any]) -> None:
    c = S.configs[cid]
    S.revisions.setdefault(cid, []).append({"id": sum(map(len, S.revisions.values())) + 1, "config_id": cid,
                                             "version": c["version"], "action": action, "actor": USER, "at": now(), "changes": changes})


@app.get("/api/admin/llm-configs")
async def list_configs() -> dict[str, Any]:
    return {"items": [S.public(i) for i in sorted(S.configs)]}


@app.post("/api/admin/llm-configs", status_code=201)
async def create_config(request: Request) -> Response:
    body = await request.json()
    if bad := validate(body):
        return bad
    cid = S.next_id
    S.next_id += 1
    c = {"id": cid, "tier": body["tier"], "name": body["name"], "base_url": body["base_url"], "model": body["model"],
         "api_style": body.get("api_style") or "chat-completions", "timeout_s": body.get("timeout_s") or 30.0,
         "max_tokens": body.get("max_tokens") or 300, "temperature": body.get("temperature"),
         "enable_thinking": body.get("enable_thinking"), "reasoning_effort": body.get("reasoning_effort"),
         "extra_params": body.get("extra_params") or {}, "vendor": body.get("vendor"), "is_active": False,
         "version": 1, "updated_at": now(), "updated_by": USER}
    S.configs[cid] = c
    S.keys[cid] = body.get("api_key") or ""
    revise(cid, "create", {k: {"old": None, "new": c[k]} for k in WRITABLE if c.get(k) is not None})
    if body.get("is_active"):
        await activate(cid)
    return JSONResponse(S.public(cid), status_code=201)


@app.get("/api/admin/llm-configs/{cid}")
async def get_config(cid: int) -> Response:
    if cid not in S.configs:
        return err(404, "not_found", "no such configuration")
    return JSONResponse(S.public(cid))


@app.put("/api/admin/llm-configs/{cid}")
async def update_config(cid: int, request: Request) -> Response:
    if cid not in S.configs:
        return err(404, "not_found", "no such configuration")
    body = await request.json()
    c = S.configs[cid]
    if body.get("version") != c["version"]:
        return err(409, "version_conflict", f"configuration {cid} is at version {c['version']}, not {body.get('version')}")
    if bad := validate({**c, **body}):
        return bad
    changes = {k: {"old": c.get(k), "new": body[k]} for k in WRITABLE if k in body and body[k] != c.get(k)}
    key = body.get("api_key")
    if key is not None and key != mask(S.keys.get(cid, "")):
        S.keys[cid] = key
        changes["api_key"] = {"changed": True}
    for k in WRITABLE:
        if k in body:
            c[k] = body[k]
    c["version"] += 1
    c["updated_at"] = now()
    revise(cid, "update", changes)
    return JSONResponse(S.public(cid))


@app.delete("/api/admin/llm-configs/{cid}")
async def delete_config(cid: int) -> Response:
    S.configs.pop(cid, None)
    return Response(status_code=204)


@app.post("/api/admin/llm-configs/{cid}/activate")
async def activate(cid: int) -> Response:
    if cid not in S.configs:
        return err(404, "not_found", "no such configuration")
    tier = S.configs[cid]["tier"]
    for other in S.configs.values():
        if other["tier"] == tier and other["is_active"] and other["id"] != cid:
            other["is_active"] = False
    S.configs[cid]["is_active"] = True
    return JSONResponse(S.public(cid))


@app.post("/api/admin/llm-configs/{cid}/test")
async def test_config(cid: int) -> dict[str, Any]:
    c = S.configs[cid]
    await asyncio.sleep(0.15)
    def check(name: str, status: str, code: str, **values: Any) -> dict[str, Any]:
        return {"name": name, "status": status, "code": code, "values": values}

    reached = [check("reachable", "ok", "answered"), check("auth", "ok", "accepted"),
               check("model", "ok", "served", configured=c["model"], served=c["model"])]
    if "think" in c["model"]:
        cap = min(c["max_tokens"], 16)
        return {"ok": True, "latency_ms": 812, "model": c["model"], "thinking_suppressed": False,
                "test_max_tokens": cap, "checks": [
                    *reached, check("thinking", "warn", "not_suppressed", reasoning_seen=True,
                                    reasoning_tokens=cap),
                    check("answer", "info", "reasoning_used_test_cap", test_max_tokens=cap,
                          max_tokens=c["max_tokens"])],
                "diagnostic": None}
    return {"ok": True, "latency_ms": 143, "model": c["model"], "thinking_suppressed": True,
            "test_max_tokens": 16, "checks": [
                *reached, check("thinking", "ok", "suppressed", reasoning_seen=False),
                check("answer", "ok", "cut_at_test_cap", chars=12, test_max_tokens=16,
                      max_tokens=c["max_tokens"])],
            "diagnostic": None}


@app.get("/api/admin/llm-configs/{cid}/revisions")
async def revisions(cid: int) -> dict[str, Any]:
    return {"items": list(reversed(S.revisions.get(cid, [])))}


@app.get("/api/admin/vendors")
async def vendors() -> dict[str, Any]:
    return VENDORS.model_dump()  # the real rows: the list is data, not behaviour


@app.get("/api/admin/llm-active")
async def llm_active() -> dict[str, Any]:
    tiers: dict[str, Any] = {}
    for tier, model in (("nlu", "qwen3.5-2b"), ("chat", "qwen3.5-2b"), ("script", "qwen3.6-27b-fp8")):
        active = next((i for i, c in S.configs.items() if c["tier"] == tier and c["is_active"]), None)
        tiers[tier] = ({"source": "db", "config": S.public(active)} if active is not None else
                       {"source": "file", "config": {"name": f"{tier}-default", "model": model, "base_url": "http://127.0.0.1:8900/v1",
                                                      "max_tokens": 300, "enable_thinking": None, "api_key_masked": "", "has_api_key": False}})
    return {"generation": len(S.revisions), "tiers": tiers}


@app.get("/api/admin/diagnostics")
async def diagnostics(tier: str = "", code: str = "", model: str = "", call_id: str = "", limit: int = 50,
                      before_id: int | None = None) -> dict[str, Any]:
    rows = [r for r in S.diags if (not tier or r["tier"] == tier) and (not code or r["code"] == code)
            and (not model or r["model"] == model) and (not call_id or r["call_id"] == call_id)
            and (before_id is None or r["id"] < before_id)]
    rows.sort(key=lambda r: -r["id"])
    page = rows[:limit]
    return {"items": page, "next_before_id": page[-1]["id"] if len(rows) > limit else None}


@app.get("/api/admin/diagnostics/summary")
async def summary(window: str = "1h") -> dict[str, Any]:
    tiers: dict[str, Any] = {}
    for r in S.diags:
        t = tiers.setdefault(r["tier"], {"count": 0, "codes": {}, "lat": []})
        t["count"] += 1
        t["codes"][r["code"]] = t["codes"].get(r["code"], 0) + 1
        t["lat"].append(r["latency_ms"])
    for t in tiers.values():
        lat = sorted(t.pop("lat"))
        t["latency_ms"] = {p: lat[min(len(lat) - 1, int(len(lat) * q))] for p, q in (("p50", .5), ("p90", .9), ("p99", .99))}
    return {"window": window, "tiers": tiers}


@app.post("/api/nlu/decide")
async def decide(request: Request) -> Response:
    body = await request.json()
    await asyncio.sleep(0.1)
    intents = [i["name"] for i in body.get("intents") or []]
    return JSONResponse({"intent": intents[0] if intents else None, "confidence": 0.93,
                         "slots": {s["name"]: ("明天下午三点以后" if s.get("type") == "string" else None) for s in body.get("slots") or []},
                         "fallback": False, "model": "qwen3.5-2b", "latency_ms": 97, "diagnostic": None})


@app.post("/api/chat/sessions", status_code=201)
async def chat_session(request: Request) -> Response:
    body = await request.json()
    S.chat[body["call_id"]] = {"cancel": asyncio.Event(), "history": []}
    return JSONResponse({"call_id": body["call_id"]}, status_code=201)


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


SENTENCES = ["您好，这里是宽带服务中心回访。", "请问您家的宽带安装后使用还顺利吗？", "如果网速方面有任何问题，",
             "我们可以安排师傅上门检测。", "另外最近有路由器升级活动，", "需要的话我可以帮您登记。"]


@app.post("/api/chat/sessions/{call_id}/turns")
async def chat_turn(call_id: str, request: Request) -> Response:
    body = await request.json()
    sess = S.chat.get(call_id)
    if sess is None:
        return err(404, "not_found", "no such session")
    sess["cancel"] = cancel = asyncio.Event()
    turn = body["turn_id"]

    async def gen():  # type: ignore[no-untyped-def]
        reason = "completed"
        for i, s in enumerate(SENTENCES):
            try:
                await asyncio.wait_for(cancel.wait(), timeout=0.35)
                reason = "cancelled"
                break
            except TimeoutError:
                pass
            if body.get("output") == "text":
                yield sse("text_delta", {"turn_id": turn, "text": s})
            else:
                yield sse("sentence", {"turn_id": turn, "index": i, "text": s})
        yield sse("usage", {"prompt_tokens": 80, "completion_tokens": 60, "reasoning_tokens": 0})
        yield sse("end", {"turn_id": turn, "reason": reason, "error": None})

    return StreamingResponse(gen(), media_type="text/event-stream")


@app.post("/api/chat/sessions/{call_id}/cancel")
async def chat_cancel(call_id: str) -> Response:
    if call_id in S.chat:
        S.chat[call_id]["cancel"].set()
    return Response(status_code=204)


@app.post("/api/scripts/generate")
async def script(request: Request) -> Response:
    await request.json()
    text = "【开场】您好，我是宽带服务中心的回访专员。\n【确认】请问安装师傅的服务您满意吗？\n【推荐】我们现在有路由器升级活动……\n【结束】感谢您的配合，祝您生活愉快！"

    async def gen():  # type: ignore[no-untyped-def]
        for i in range(0, len(text), 6):
            await asyncio.sleep(0.04)
            yield f"data: {json.dumps({'type': 'text_delta', 'text': text[i:i + 6]}, ensure_ascii=False)}\n\n".encode()
        yield f"data: {json.dumps({'type': 'end', 'reason': 'completed'})}\n\n".encode()

    return StreamingResponse(gen(), media_type="text/event-stream")


mount_console(app)
