"""Prices on configurations and the cost, key and campaign of every call-log record.

Costs are checked to the token against the usage the emulator reported; bad prices are a
422 naming the field. Against the real app on PostgreSQL, the emulator answering.
"""

from __future__ import annotations

from typing import Any

import pytest

from callout_server.calllog.caller import Caller
from callout_server.calllog.reports import to_record
from callout_server.llm import Diagnostic, LLMConfig, Price
from callout_server.upstream import CallReport
from tests.fixtures.database import ADMIN_HEADERS, EN, SERVICE_HEADERS, llm_config_body
from tests.support.keys import bearer, create_key
from tests.support.nlu import DECIDE, answer, decide_body, nlu_app
from tests.test_nlu_decide import records

CONFIGS = "/api/admin/llm-configs"
PRICE = {"input_per_mtok": 0.8, "output_per_mtok": 2.4, "currency": "CNY"}


def test_reasoning_tokens_are_priced_as_output() -> None:
    price = Price(1.0, 4.0, "USD")
    assert price.cost(1_000_000, 500_000) == pytest.approx(1.0 + 2.0)
    # Reported beside a completion count that includes it: not counted twice.
    assert price.cost(100, 300, 200) == pytest.approx((100 * 1 + 300 * 4) / 1e6)
    # Reasoning only (a call cut while thinking): still output.
    assert price.cost(100, None, 250) == pytest.approx((100 + 250 * 4) / 1e6)
    assert price.cost(None, None) == 0.0


def test_to_record_carries_cost_key_and_campaign() -> None:
    cfg = LLMConfig(tier="nlu", name="n", base_url="http://a/v1", model="m", id=3,
                    price={"input_per_mtok": 2, "output_per_mtok": 8, "currency": "EUR"})
    assert cfg.price == Price(2.0, 8.0, "EUR")
    diagnostic = Diagnostic(code="truncated_reasoning", prompt_tokens=40, reasoning_tokens=60)
    report = CallReport(config=cfg, endpoint=None, attempts=1, vendor="openai",
                        diagnostic=diagnostic, latency_ms=12.0)
    rec = to_record(report, "nlu", caller=Caller(key_id=9, campaign="spring"))
    assert (rec.key_id, rec.campaign, rec.currency) == (9, "spring", "EUR")
    assert rec.cost == pytest.approx((40 * 2 + 60 * 8) / 1e6)
    plain = LLMConfig(tier="nlu", name="n", base_url="http://a", model="m")
    unpriced = to_record(CallReport(config=plain, endpoint=None, attempts=1, vendor="openai",
                                    diagnostic=None, latency_ms=1.0), "nlu")
    assert (unpriced.cost, unpriced.currency, unpriced.key_id) == (None, None, None)


async def test_cost_to_the_token_and_the_caller_on_every_record(
        make_settings: Any, pg_url: str, emulator: Any) -> None:
    model = emulator.unique_model("qwen2.5-7b")
    await emulator.script(model, {"content": answer("agree")})
    async with nlu_app(make_settings, pg_url, emulator, model) as client:
        r = await client.post(CONFIGS, headers=ADMIN_HEADERS, json=llm_config_body(
            model=model, base_url=emulator.base_url("vllm"), is_active=True, price=PRICE))
        assert r.status_code == 201, r.text
        assert r.json()["price"] == PRICE
        key = await create_key(client, tiers=["nlu"], campaign="renewals-q4")
        assert (await client.post(DECIDE, headers=bearer(key), json=decide_body())).status_code == 200
        assert (await client.post(DECIDE, headers=SERVICE_HEADERS,
                                  json=decide_body())).status_code == 200
        env_rec, key_rec = await records(client)  # newest first
        assert (key_rec["key_id"], key_rec["campaign"]) == (key["id"], "renewals-q4")
        assert (env_rec["key_id"], env_rec["campaign"]) == (None, None)
        for rec in (key_rec, env_rec):
            assert rec["prompt_tokens"] > 0 and rec["completion_tokens"] > 0
            expected = (rec["prompt_tokens"] * 0.8 + rec["completion_tokens"] * 2.4) / 1e6
            assert rec["cost"] == pytest.approx(expected, rel=1e-12)
            assert rec["currency"] == "CNY"

        # A price removed: calls are unpriced from the next one on.
        cfg = r.json()
        r = await client.put(f"{CONFIGS}/{cfg['id']}", headers=ADMIN_HEADERS,
                             json={"version": cfg["version"], "price": None})
        assert r.status_code == 200 and r.json()["price"] is None, r.text
        await client.post(DECIDE, headers=SERVICE_HEADERS, json=decide_body())
        assert (await records(client))[0]["cost"] is None


@pytest.mark.parametrize(("price", "field"), [
    ({**PRICE, "input_per_mtok": -1}, "price.input_per_mtok"),
    ({**PRICE, "output_per_mtok": "1e999"}, "price.output_per_mtok"),
    ({**PRICE, "output_per_mtok": "NaN"}, "price.output_per_mtok"),
    ({**PRICE, "currency": "yuan"}, "price.currency"),
    ({"input_per_mtok": 1, "currency": "CNY"}, "price.output_per_mtok"),
    ({**PRICE, "discount": 0.5}, "price.discount"),
])
async def test_a_bad_price_is_a_422_naming_the_field(app_client: Any, price: dict[str, Any],
                                                     field: str) -> None:
    r = await app_client.post(CONFIGS, headers={**ADMIN_HEADERS, **EN},
                              json=llm_config_body(price=price))
    assert r.status_code == 422, r.text
    assert field in [f["field"] for f in r.json()["error"]["fields"]], r.text
    assert (await app_client.get(CONFIGS, headers=ADMIN_HEADERS)).json()["items"] == []
