"""A shadow evaluation's rows hold no personal value: the replay is sent from the redacted
inputs, and what the candidate answers (a number it made up or repeated) is redacted before
its row is written (PostgreSQL, the real emulator)."""

from __future__ import annotations

import orjson
from sqlalchemy import select

from callout_server.evaluation.models import EvaluationResult
from tests.fixtures.database import ADMIN_HEADERS
from tests.support.nlu import answer, decide, nlu_app
from tests.support.pii import leaks, structured_utterances
from tests.test_evaluation import EVALS, candidate, finished, start

SLOTS = [{"name": "contact", "description": "联系方式", "type": "string"}]
CANDIDATE_SAYS = "13968321065"  # a mobile of the corpus, answered by the candidate


async def test_evaluation_rows_hold_no_personal_value(make_settings, pg_url, emulator) -> None:
    said = structured_utterances(4)
    live, cand = emulator.unique_model("qwen2.5-7b"), emulator.unique_model("qwen2.5-7b")
    await emulator.script(cand, {"content": answer("agree", 0.7, contact=CANDIDATE_SAYS)})
    async with nlu_app(make_settings, pg_url, emulator, live) as client:
        for i, u in enumerate(said):
            await emulator.script(live, {"content": answer("agree", 0.9, contact=u.values[0].text)},
                                  times=1)
            r, _ = await decide(client, call_id=f"c{i}", utterance=u.text, slots=SLOTS)
            assert r.status_code == 200 and r.json()["slots"]["contact"] == u.values[0].text
        await client.services.recorder.flush()  # type: ignore[attr-defined]
        cand_id = await candidate(client, emulator, cand)
        r = await start(client, candidate_id=cand_id, limit=50)
        assert r.status_code == 202, r.text
        body = await finished(client, r.json()["id"])
        assert body["status"] == "done" and body["summary"]["calls"] == len(said)
        async with client.services.db.session() as s:  # type: ignore[attr-defined]
            rows = (await s.scalars(select(EvaluationResult))).all()
        stored = orjson.dumps([{c.name: getattr(row, c.name) for c in EvaluationResult.__table__.columns}
                               for row in rows], default=str).decode()
        everyone = [*said, *structured_utterances(40)]
        assert len(rows) == len(said) and leaks(stored, said) == []
        assert CANDIDATE_SAYS not in stored and leaks(stored, everyone) == []
        assert all(row.redacted and row.redacted.get("mobile", 0) >= 1 for row in rows)
        r = await client.get(f"{EVALS}/{body['id']}/disagreements", headers=ADMIN_HEADERS)
        assert r.status_code == 200 and CANDIDATE_SAYS not in r.text and leaks(r.text, said) == []
