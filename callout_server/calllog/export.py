"""The call log as CSV: what `GET /api/admin/diagnostics/export` streams.

Pure formatting: record dicts (as the list answers them, worded in the reader's language)
in, CSV text out, one chunk per page of rows, so a large export never sits in memory. The
header row is the record's field names (stable, what a script reads); the first chunk
starts with a UTF-8 byte-order mark, without which Excel shows Chinese as mojibake.

Text a client or a vendor chose (call_id, node_id, a vendor's message) may start with
`=`, `+`, `-` or `@`, which a spreadsheet runs as a formula: such a cell gets a leading
`'` (OWASP's advice for CSV injection). Numbers are written as they are, a JSON column
(`redacted`, `speech`) as its JSON text.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

import orjson

from callout_server.calllog.repository import RECORD_FIELDS

BOM = "\ufeff"
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, dict | list):  # `redacted`, `speech`: as JSON, not Python's repr
        value = orjson.dumps(value).decode()
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


def csv_chunk(rows: Iterable[dict[str, Any]], *, header: bool = False) -> str:
    """CSV text for `rows` (RECORD_FIELDS columns), with the BOM and header row if asked."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    if header:
        out.write(BOM)
        writer.writerow(RECORD_FIELDS)
    for row in rows:
        writer.writerow([_cell(row.get(name)) for name in RECORD_FIELDS])
    return out.getvalue()
