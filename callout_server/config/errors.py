"""Errors of the configuration package; each carries its HTTP status and stable code.

    ApiError (callout_server.api.errors)
      ConfigNotFound          404 not_found
      VersionConflict         409 version_conflict      stale `version`, nothing changed
      NameConflict            409 name_conflict         (tier, name) already used
      DatabaseUnavailable     503 database_unavailable  admin write/read while the DB is down
      ConfigUnusable          503 config_unusable       stored API key cannot be decrypted
      ApiKeyRequired          422 api_key_required      base_url moves to another origin
                                                        while a key is stored
"""

from __future__ import annotations

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


class ApiKeyRequired(UnprocessableEntity):
    """The stored key was saved for one origin; it is never sent to another one unasked."""

    code = "api_key_required"

    def __init__(self) -> None:
        super().__init__(msg("api_key_required"),
                         fields=[{"field": "api_key", "code": "api_key_required",
                                  "message": msg("api_key_required_field")}])
