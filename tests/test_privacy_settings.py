"""`[privacy]`: defaults, kinds, the pseudonym key, retention per data class, the warning."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from callout_server.config.privacy import privacy_from_settings
from callout_server.config.settings import ConfigFileError, load_settings
from callout_server.privacy import FAILED, Privacy, derive_key
from tests.fixtures.database import CONFIG_TOML, SECRET_KEY

PHONE = "我的手机号是13800138000"


def test_defaults_redact_structured_kinds(make_settings: Any) -> None:
    s = make_settings()
    assert s.privacy.redact is True
    assert s.privacy.kinds == ["bank_card", "email", "id_number", "landline", "mobile"]
    text, tally = privacy_from_settings(s).text(PHONE)
    assert "13800138000" not in (text or "") and tally == {"mobile": 1}


def test_retention_per_class_falls_back_to_older_settings(make_settings: Any) -> None:
    assert make_settings().retention_days == {
        "call_log": 30, "nlu_inputs": 7, "evaluations": 7, "audit": 365}
    s = make_settings(**{"calllog.nlu_inputs_days": 3, "diagnostics.retention_days": 10,
                         "audit.retention_days": 40})
    assert s.retention_days == {"call_log": 10, "nlu_inputs": 3, "evaluations": 3, "audit": 40}
    s = make_settings(**{"privacy.retention_days": {
        "nlu_inputs": 2, "call_log": 5, "evaluations": 4, "audit": 60}})
    assert s.retention_days == {"call_log": 5, "nlu_inputs": 2, "evaluations": 4, "audit": 60}
    # NLU inputs never outlive the records they belong to.
    s = make_settings(**{"privacy.retention_days": {"nlu_inputs": 9, "call_log": 5}})
    assert s.retention_days["nlu_inputs"] == 5


@pytest.mark.parametrize("overrides, key", [
    ({"privacy.kinds": ["mobile", "passport"]}, "privacy.kinds"),
    ({"privacy.key": "tiny-k"}, "privacy.key"),
    ({"privacy.retention_days": {"audit": 0}}, "retention_days.audit"),
    ({"privacy.retention_days": {"chat": 3}}, "retention_days.chat"),
])
def test_bad_values_name_the_key(make_settings: Any, overrides: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigFileError, match=key.replace(".", r"\.")) as err:
        make_settings(**overrides)
    assert "tiny-k" not in str(err.value)  # a key's value is never echoed


def test_key_from_secret_key_or_its_own_setting(make_settings: Any) -> None:
    derived = privacy_from_settings(make_settings())
    assert derived.text(PHONE) == Privacy(derive_key(SECRET_KEY)).text(PHONE)
    own = privacy_from_settings(make_settings(**{"privacy.key": "x" * 32}))
    assert own.text(PHONE) == Privacy("x" * 32).text(PHONE)
    assert own.text(PHONE) != derived.text(PHONE)
    env = {"CALLOUT_SECRET_KEY": SECRET_KEY, "CALLOUT_PRIVACY_KEY": "y" * 20,
           "CALLOUT_PRIVACY_REDACT": "false"}
    s = load_settings(CONFIG_TOML, env=env)
    assert s.privacy.key.get_secret_value() == "y" * 20 and s.privacy.redact is False


def test_optional_kinds(make_settings: Any) -> None:
    p = privacy_from_settings(make_settings(**{"privacy.kinds": ["name", "mobile"]}))
    text, tally = p.text("我叫张伟，电话13800138000")
    assert "张伟" not in (text or "") and tally == {"name": 1, "mobile": 1}


def test_redact_false_warns_at_start(make_settings: Any, caplog: pytest.LogCaptureFixture,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Another test's logging set-up may have disabled the loggers that existed then.
    monkeypatch.setattr(logging.getLogger("callout_server.privacy"), "disabled", False)
    with caplog.at_level(logging.WARNING, logger="callout_server.privacy"):
        p = privacy_from_settings(make_settings(**{"privacy.redact": False}))
    assert not p.enabled and p.text(PHONE) == (PHONE, {})
    assert any("redact = false" in r.getMessage() for r in caplog.records)


def test_guard_fails_closed() -> None:
    p = Privacy("k" * 16)
    assert p.text("x" * 2_000_000) == (None, {FAILED: 1})
    assert p.value({"a": object()}) == (None, {FAILED: 1})
    assert p.line("x" * 2_000_000).startswith("[log line withheld: redaction_failed")
