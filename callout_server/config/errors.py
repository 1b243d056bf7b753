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
"""

from __future__ import annotations

from callout_server.errors import Conflict, NotFound, ServiceUnavailable, UnprocessableEntity


class ConfigNotFound(NotFound):
    def __init__(self, config_id: int) -> None:
        super().__init__(f"model configuration {config_id} not found", config_id=config_id)


class VersionConflict(Conflict):
    code = "version_conflict"

    def __init__(self, config_id: int, sent: int, current: int) -> None:
        super().__init__(
            f"model configuration {config_id} was changed by someone else (you sent version "
            f"{sent}, it is now {current}); reload it and apply your change again",
            config_id=config_id, current_version=current)


class NameConflict(Conflict):
    code = "name_conflict"

    def __init__(self, tier: str, name: str) -> None:
        super().__init__(f"a {tier} configuration named {name!r} already exists",
                         fields=[{"field": "name", "message": "already used in this tier"}])


class DatabaseUnavailable(ServiceUnavailable):
    code = "database_unavailable"

    def __init__(self) -> None:
        super().__init__(
            "the configuration database is unreachable; changes cannot be saved right now. "
            "Calls keep being served with the last loaded configuration; retry shortly.")


class ConfigUnusable(ServiceUnavailable):
    code = "config_unusable"

    def __init__(self, message: str, config_id: int | None) -> None:
        super().__init__(message, config_id=config_id)


class PoolInvalid(UnprocessableEntity):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}", fields=[{"field": field, "message": message}])


class InUse(Conflict):
    code = "in_use"

    def __init__(self, config_id: int, users: list[int], doing: str) -> None:
        names = ", ".join(str(u) for u in users)
        super().__init__(
            f"model configuration {config_id} is a fallback of configuration(s) {names}; "
            f"remove it from their fallback_ids before you {doing}",
            config_id=config_id, used_by=users)


class ApiKeyRequired(UnprocessableEntity):
    """The stored key was saved for one origin; it is never sent to another one unasked."""

    code = "api_key_required"

    def __init__(self) -> None:
        super().__init__(
            "api_key: base_url or an endpoint now points to another origin (scheme, host or "
            "port) and this "
            "configuration holds an API key; the stored key is never sent to a new host. Send "
            "the key for the new host in api_key in the same request (or \"\" to clear it).",
            fields=[{"field": "api_key",
                     "message": "required when base_url moves to another host"}])
