"""The import contracts in pyproject.toml ([tool.importlinter]) hold.

The shared LLM client is the ground floor: nothing in `callout_server.llm` imports another
package of the project but the message catalogue (`i18n`, below it), so no cycle can run
through it (it used to import the configuration package, which imports it back).
docs/architecture.md draws the floors.
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


def test_no_module_imports_itself_back() -> None:
    """No import cycle between modules at all, imports only for type checking included: a
    cycle there is still two modules that each need the other."""
    import grimp

    graph = grimp.build_graph("callout_server", exclude_type_checking_imports=False,
                              cache_dir=None)
    cycles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                cycles.add(" -> ".join((module, *back)))
    assert sorted(cycles) == []


def test_every_package_reads_the_llm_client_through_its_surface() -> None:
    """The `llm-surface` contract names every module and package beside `llm`: a new
    package is held to it from its first line (add it to the contract's list)."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [surface] = [c for c in contracts["contracts"] if c["id"] == "llm-surface"]
    beside = {f"callout_server.{p.stem if p.is_file() else p.name}"
              for p in (ROOT / "callout_server").iterdir()
              if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
              or (p.is_dir() and (p / "__init__.py").exists())}
    assert beside - {"callout_server.llm"} == set(surface["source_modules"])
