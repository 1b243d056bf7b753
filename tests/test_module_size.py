"""No module of the package is past 400 lines: a longer one is asking to be split along a
seam (STYLE.md, "God modules")."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 400


def test_no_module_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "callout_server").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
