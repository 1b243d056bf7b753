"""The import contracts in pyproject.toml ([tool.importlinter]) hold.

The shared LLM client is the ground floor: nothing in `callout_server.llm` imports another
package of the project, so no cycle can run through it (it used to import the configuration
package, which imports it back). docs/architecture.md draws the floors.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept(capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the contracts name modules from the repository root
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    report = capsys.readouterr().out
    assert code == 0, report
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    expected = len(contracts["contracts"])
    assert f"Contracts: {expected} kept, 0 broken." in report  # every one was checked
