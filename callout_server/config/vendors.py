"""The vendor dialects an operator can name on a configuration, read from the client's rows.

`GET /api/admin/vendors` serves them to the console (its vendor select is built from this
list, so a new row in `llm/dialects.py` shows up there with no console change), and
`check_vendor` rejects a name that is not a row, for the admin API and for `config.toml`
alike: a misspelt vendor would otherwise be stored and silently fall back to detection.
"""

from __future__ import annotations

from pydantic import BaseModel

from callout_server.i18n import invalid
from callout_server.llm import DIALECTS, Dialect


class DetectionOut(BaseModel):
    """How a base URL is recognised as this vendor (all empty: only by explicit name)."""

    hosts: list[str]  # fnmatch patterns on the lower-cased host
    host_contains: list[str]
    url_contains: list[str]
    ports: list[int]
    fallback: bool  # the row for any base URL no other row recognises


class VendorOut(BaseModel):
    name: str  # the value of a configuration's `vendor`
    display_name: str
    thinking_switch: bool  # a request setting switches its thinking (else: extra_params)
    # reasoning_effort values we send: [] never sent, null passed through unchecked.
    reasoning_effort: list[str] | None
    detected_by: DetectionOut
    # The console's preset: where a new configuration of this vendor starts ("" for none).
    base_url: str


class VendorList(BaseModel):
    items: list[VendorOut]


def vendor_out(row: Dialect) -> VendorOut:
    efforts = row.accepted_efforts()
    return VendorOut(
        name=row.name, display_name=row.label, thinking_switch=row.thinking_switch,
        reasoning_effort=None if efforts is None else list(efforts),
        detected_by=DetectionOut(**row.detection()), base_url=row.base_url)


# Built once: the rows are immutable for the life of the process.
VENDORS = VendorList(items=[vendor_out(row) for row in DIALECTS.values()])


def check_vendor(value: str | None) -> str | None:
    """A known dialect name (lower-cased), None for unset or blank; a ValueError (`invalid`) otherwise."""
    if value is None or not value.strip():
        return None
    name = value.strip().lower()
    if name not in DIALECTS:
        raise invalid("unknown_vendor", value=value, names=", ".join(DIALECTS))
    return name
