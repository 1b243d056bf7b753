"""Errors of the configuration package; each carries its HTTP status and stable code.

    ApiError (callout_server.api.errors)
      ConfigNotFound          404 not_found
      VersionConflict         409 version_conflict      stale `version`, nothing changed
      NameConflict            409 name_conflict         (tier, name) already used
      DatabaseUnavailable     503 database_unavailable  admin write/read while the DB is down
      ConfigUnusable          503 config_unusable       stored API key cannot be decrypted
      ApiKeyRequired          422 api_key_required      base_url (or a new endpoint) is
                                                        another origin while a key is stored
      PoolInvalid             422 validation_error      endpoints / fallback_ids that cannot be
      InUse                   409 in_use                another configuration falls back to it
      TargetRefused           422 validation_error      a base URL that is (or resolves to) a
                                                        cloud-metadata or link-local address
      EndpointNotFound        404 not_found             no such endpoint in that pool (drains)
"""

from __future__ import annotations

from typing import Any

from callout_server.errors import Conflict, NotFound, ServiceUnavailable, UnprocessableEntity
from callout_server.i18n import msg


class ConfigNotFound(NotFound):
    def __init__(self, config_id: int) -> None:
        super().__init__(msg("config_not_found", config_id=config_id), config_id=config_id)


class VersionConflict(Conflict):
    code = "version_conflict"

    def __init__(self, config_id: int, sent: int, current: int) -> None:
        super().__init__(msg("version_conflict", config_id=config_id, sent=sent, current=current),
                         config_id=config_id, current_version=current)


class NameConflict(Conflict):
    code = "name_conflict"

    def __init__(self, tier: str, name: str) -> None:
        super().__init__(msg("name_conflict", tier=tier, name=name),
                         fields=[{"field": "name", "code": "name_conflict",
                                  "message": msg("name_taken")}])


class DatabaseUnavailable(ServiceUnavailable):
    code = "database_unavailable"

    def __init__(self) -> None:
        super().__init__(msg("config_db_unavailable"))


class ConfigUnusable(ServiceUnavailable):
    code = "config_unusable"

    def __init__(self, config_id: int | None) -> None:
        super().__init__(msg("config_unusable", config_id=config_id), config_id=config_id)


class PoolInvalid(UnprocessableEntity):
    """A pool field that only makes sense against the stored configurations (422)."""

    def __init__(self, *, field: str, code: str, **values: Any) -> None:
        super().__init__(msg("field_invalid", field=field, reason=msg(code, **values)),
                         fields=[{"field": field, "code": code, "message": msg(code, **values)}])


class InUse(Conflict):
    code = "in_use"

    def __init__(self, config_id: int, users: list[int], doing: str) -> None:
        # `doing`: "delete" or "move" (another tier)
        names = ", ".join(str(u) for u in users)
        super().__init__(msg(f"in_use_{doing}", config_id=config_id, names=names),
                         config_id=config_id, used_by=users)


class ApiKeyRequired(UnprocessableEntity):
    """The stored key was saved for one origin; it is never sent to another one unasked."""

    code = "api_key_required"

    def __init__(self) -> None:
        super().__init__(msg("api_key_required"),
                         fields=[{"field": "api_key", "code": "api_key_required",
                                  "message": msg("api_key_required_field")}])


class TargetRefused(UnprocessableEntity):
    """A base URL the target policy refuses (llm/targets.py), named by its field."""

    def __init__(self, field: str, address: str) -> None:
        reason = msg("url_blocked_target", address=address)
        super().__init__(msg("field_invalid", field=field, reason=reason),
                         fields=[{"field": field, "code": "url_blocked_target",
                                  "message": reason}])


class EndpointNotFound(NotFound):
    def __init__(self, config: str, base_url: str) -> None:
        super().__init__(msg("endpoint_not_found", config=config, base_url=base_url),
                         config=config, base_url=base_url)
