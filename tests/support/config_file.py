"""A copy of the repository's config.toml with a few settings changed, for `serve` processes.

    path = config_with(tmp_path, {"chat": {"max_unread_bytes": 4096}})
    await start_worker("w", CALLOUT_CONFIG=str(path))

A key the section already sets has its line replaced; any other is written as the first
line of its section (a section the file lacks is added at the end).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fixtures.database import CONFIG_TOML


def config_with(directory: Path, sections: dict[str, dict[str, Any]]) -> Path:
    lines = CONFIG_TOML.read_text(encoding="utf-8").splitlines()
    for section, values in sections.items():
        todo = dict(values)
        header = f"[{section}]"
        inside = False
        start = None
        for i, line in enumerate(lines):
            if line.startswith("["):
                inside = line.strip() == header
                if inside:
                    start = i
                continue
            key = line.split("=", 1)[0].strip()
            if inside and "=" in line and key in todo:
                lines[i] = f"{key} = {json.dumps(todo.pop(key))}"
        new = [f"{key} = {json.dumps(value)}" for key, value in todo.items()]
        if start is None:
            lines += ["", header, *new]
        else:
            lines[start + 1:start + 1] = new
    path = directory / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
