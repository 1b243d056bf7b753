"""The cost of each stage of one decision, timed alone in this process (no I/O).

    .venv/bin/python bench/bench_stages.py [--n 20000]

For the decision bench_nlu.py and bench_peers.py send (a Chinese node, two intents, one slot,
one turn of context), each stage is called `--n` times in a row; the figure is the best of five
such batches, in µs per call (best, not median: on a shared machine the lowest batch is the one
least disturbed). The profile (profile_nlu.py) says where a loaded worker spends its time; this
says what each piece costs by itself, and what the alternatives tried cost beside it.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import orjson
from bench_nlu import DECIDE, MODEL, REPLY

from callout_server.auth.tokens import TokenTable, hash_token
from callout_server.llm.adapters import make_adapter
from callout_server.llm.answer import Answer
from callout_server.llm.config import LLMConfig
from callout_server.llm.events import Finish
from callout_server.llm.json_extract import extract_json_object
from callout_server.llm.request_body import build_request
from callout_server.tiers.nlu.prompt import build_messages
from callout_server.tiers.nlu.schemas import DecideRequest, Decision
from callout_server.tiers.nlu.service import llm_request
from callout_server.tiers.nlu.validate import validate_answer

try:
    import msgspec  # optional: only to compare, never a dependency
except ImportError:
    msgspec = None

if msgspec is not None:
    class MIntent(msgspec.Struct, forbid_unknown_fields=True):
        name: str
        description: str = ""

    class MSlot(msgspec.Struct, forbid_unknown_fields=True):
        name: str
        description: str = ""
        type: str = "string"
        values: list[str] | None = None

    class MTurn(msgspec.Struct, forbid_unknown_fields=True):
        role: str
        content: str

    class MDecide(msgspec.Struct, forbid_unknown_fields=True):
        utterance: str
        call_id: str | None = None
        node_id: str | None = None
        context: list[MTurn] = msgspec.field(default_factory=list)
        intents: list[MIntent] = msgspec.field(default_factory=list)
        slots: list[MSlot] = msgspec.field(default_factory=list)
        instructions: str | None = None
        fallback_intent: str | None = None
        overrides: dict[str, Any] = msgspec.field(default_factory=dict)
        deadline_ms: int | None = None


def best_us(fn: Callable[[], Any], n: int) -> float:
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, (time.process_time() - t0) / n * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20000)
    n = parser.parse_args().n
    raw = orjson.dumps(DECIDE)
    req = DecideRequest.model_validate_json(raw)
    cfg = LLMConfig(tier="nlu", name="bench", base_url="http://127.0.0.1:1/v1", model=MODEL,
                    max_tokens=300, temperature=0.1)
    llm_req = llm_request(req)
    built = build_request(cfg, llm_req, stream=False)
    reply = orjson.loads(REPLY)
    content = reply["choices"][0]["message"]["content"]
    answer = extract_json_object(content)
    decision = Decision(intent="agree", confidence=0.93, slots={"time": "明天下午三点以后"},
                        fallback=False, model=MODEL, latency_ms=3, diagnostic=None)
    from fastapi._compat import ModelField  # the route's response field, as FastAPI builds it
    from pydantic.fields import FieldInfo

    field = ModelField(field_info=FieldInfo(annotation=Decision), name="Response_decide",
                       mode="serialization")
    tokens = TokenTable([("service-token", "service", hash_token("bench-service-token")),
                         ("admin-token", "admin", hash_token("bench-admin-token"))])

    def parse() -> None:
        adapter = make_adapter(cfg.api_style, cfg.model, built.row)
        events = adapter.parse(orjson.loads(REPLY))
        a = Answer()
        for event in events[:-1]:
            a.add(event)
        end = events[-1]
        assert isinstance(end, Finish)
        a.finish(end, max_tokens=300, thinking=False, locale="zh")

    def encode_fastapi() -> bytes:
        value, _ = field.validate(decision, {}, loc=("response",))
        return field.serialize_json(value)  # type: ignore[no-any-return]

    stages: list[tuple[str, Callable[[], Any]]] = [
        ("request decoding: model_validate_json (the lean route)",
         lambda: DecideRequest.model_validate_json(raw)),
        ("request decoding: json.loads + model_validate (FastAPI's way)",
         lambda: DecideRequest.model_validate(json.loads(raw))),
        ("prompt: build_messages", lambda: build_messages(req)),
        ("prompt + overrides: llm_request", lambda: llm_request(req)),
        ("dialect shaping: build_request", lambda: build_request(cfg, llm_req, stream=False)),
        ("request body: orjson.dumps", lambda: orjson.dumps(built.body)),
        ("response parsing: adapter + answer + classify", parse),
        ("JSON extraction", lambda: extract_json_object(content)),
        ("answer validation", lambda: validate_answer(req, answer)),
        ("response encoding: the route's field (validate + serialize_json)", encode_fastapi),
        ("response encoding: model_dump_json", decision.model_dump_json),
        ("response encoding: orjson.dumps(model_dump())", lambda: orjson.dumps(decision.model_dump())),
        ("auth: TokenTable.lookup", lambda: tokens.lookup("bench-service-token")),
    ]
    if msgspec is not None:
        decoder = msgspec.json.Decoder(MDecide)
        stages.insert(2, ("request decoding: msgspec Struct (types only, no checks)",
                          lambda: decoder.decode(raw)))
    print(f"| stage | µs per call (best of 5 x {n}) |")
    print("|---|---:|")
    for name, fn in stages:
        print(f"| {name} | {best_us(fn, n):.1f} |")


if __name__ == "__main__":
    main()
