"""Shared test set-up. Fixtures live in tests/fixtures/, one module per concern."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

pytest_plugins = [
    "tests.fixtures.emulator",
    "tests.fixtures.database",
    "tests.fixtures.upstream",
    "tests.fixtures.calllog",
    "tests.fixtures.people",
]

# What makes a test file long: a browser, or real worker processes (each imports the whole
# service and starts it).
_LONG_FILE_MARKS = ("start_worker", "ServerProcess", "console_server", "api_server")


@cache
def _weight(path: Path) -> int:
    if "browser" in path.parts:
        return 0
    text = path.read_text(encoding="utf-8", errors="replace")
    return 1 if any(mark in text for mark in _LONG_FILE_MARKS) else 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first. pytest-xdist hands out files in this order as processes free
    up: long ones first, so none is left running alone at the end (longest first is the
    classic rule for packing jobs on a few machines)."""
    items.sort(key=lambda item: _weight(item.path))
