"""Path and query parameter types the routes share: bounded to what the database can hold.

An id beyond a BIGINT or a version beyond an INTEGER would otherwise reach the driver and
fail there (a 500 on PostgreSQL); here it is a 422 naming the parameter. Times without a
zone are UTC.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from callout_server.validation import INT4_MAX, INT8_MAX, UtcDatetime

RowId = Annotated[int, Path(ge=1, le=INT8_MAX, description="row id")]
BeforeId = Annotated[int | None, Query(ge=1, le=INT8_MAX,
                                       description="keyset paging: ids below this one")]
Version = Annotated[int | None, Query(ge=1, le=INT4_MAX,
                                      description="the version that was read (optimistic lock)")]
Since = Annotated[UtcDatetime | None, Query(description="ISO 8601; without a zone: UTC")]
Until = Annotated[UtcDatetime | None, Query(description="ISO 8601; without a zone: UTC")]
