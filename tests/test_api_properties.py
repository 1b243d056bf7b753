"""Property-based API suite: schemathesis against the app's own OpenAPI document.

A real `callout-server serve` process on the test database, its model tiers pointed at the
vendor emulator, every operation called with generated valid and invalid data (fixed
derandomised examples, so CI is stable). What must hold for every request:

    - no server error: never a 500; a 502/504 only on the model-calling routes, and then the
      contract's error body with its diagnostic (a model call that failed without fallback);
    - every answer matches the document (status code declared, body schema, content type);
    - every error is the contract's envelope `{"error": {"code", "message"}}`.

Each operation is its own pytest case, so a failure names the route.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.fixtures.app import ServerProcess
from tests.fixtures.database import (
    ADMIN_TOKEN,
    CONFIG_TOML,
    SERVICE_TOKEN,
    reset_tables,
)
from tests.fixtures.database import test_env as worker_env
from tests.fixtures.emulator import EmulatorHandle

pytestmark = pytest.mark.timeout(300)

# Routes that call a model: a failed model call without fallback is their documented 502/504.
MODEL_ROUTES = ("/api/nlu/decide", "/api/scripts/generate", "/api/chat/sessions/{call_id}/turns",
                "/api/chat/sessions/{call_id}/tool-outputs", "/api/admin/llm-configs/{config_id}/test",
                "/api/admin/playground/nlu", "/api/admin/playground/script")
SERVICE_PREFIXES = ("/api/nlu/", "/api/chat/", "/api/scripts/")
EXAMPLES_PER_OPERATION = 15
# Each login verifies an argon2 hash (deliberately slow): fewer examples there.
FEWER_EXAMPLES = {"POST /api/auth/login": 4}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def api_server(pg_url: str, redis_url: str, emulator: EmulatorHandle,
                     tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ServerProcess]:
    """One worker for the whole module: starting one per operation would cost minutes."""
    await reset_tables(pg_url)
    base = emulator.base_url("vllm")
    env = {**worker_env(pg_url, redis_url, f"callout-props-{secrets.token_hex(4)}"),
           "CALLOUT_NLU_BASE_URL": base, "CALLOUT_CHAT_BASE_URL": base,
           "CALLOUT_SCRIPT_BASE_URL": base}
    worker = ServerProcess(env, tmp_path_factory.mktemp("props") / "worker.log", "properties")
    try:
        await worker.wait_ready()
        yield worker
    finally:
        worker.stop()


def _document() -> dict:  # type: ignore[type-arg]
    """The OpenAPI document the served app publishes (built without starting it)."""
    from callout_server.app import create_app
    from callout_server.config.settings import load_settings

    return create_app(load_settings(CONFIG_TOML, env={})).openapi()


SCHEMA = schemathesis.openapi.from_dict(_document())
OPERATIONS = [result.ok() for result in SCHEMA.get_all_operations()]
CONFORMANCE = [status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.label)
def test_every_operation_holds_its_contract(operation, mode, api_server) -> None:  # type: ignore[no-untyped-def]
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=FEWER_EXAMPLES.get(operation.label, EXAMPLES_PER_OPERATION), derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck), database=None)
    def holds(case) -> None:  # type: ignore[no-untyped-def]
        check(case, api_server.url)

    try:
        holds()
    except Unsatisfiable:
        # Negative mode on an operation with nothing to get wrong (no parameters, no body).
        assert mode is GenerationMode.NEGATIVE


def check(case, base_url: str) -> None:  # type: ignore[no-untyped-def]
    token = SERVICE_TOKEN if case.path.startswith(SERVICE_PREFIXES) else ADMIN_TOKEN
    response = case.call(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    status = response.status_code
    if status >= 500:
        body = response.json()
        assert status in (502, 504) and case.path in MODEL_ROUTES, (
            f"server error {status} on {case.method} {case.path}: {response.text[:500]}")
        assert body["error"]["code"] == body["error"]["diagnostic"]["code"]
    if status >= 400:
        error = response.json()["error"]
        assert isinstance(error["code"], str) and isinstance(error["message"], str)
    case.validate_response(response, checks=CONFORMANCE)
