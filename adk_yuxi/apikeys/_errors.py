"""Why a key could not be used, issued or revoked."""

from __future__ import annotations

from ..errors import YuxiError

__all__ = ["ApiKeyError", "ApiKeyForbidden", "ApiKeyNotFound", "InvalidApiKey"]


class ApiKeyError(YuxiError):
    """Base class of the API key errors."""


class InvalidApiKey(ApiKeyError):
    """The token is unknown, revoked or expired, or its user is disabled (HTTP 401).

    One message for every cause, so a caller learns nothing about other keys."""

    def __init__(self) -> None:
        super().__init__("invalid, revoked or expired API key")


class ApiKeyNotFound(ApiKeyError, LookupError):
    """No such key visible to the caller (HTTP 404)."""

    def __init__(self, key_id: str) -> None:
        self.key_id = key_id
        super().__init__(f"no API key {key_id!r}")


class ApiKeyForbidden(ApiKeyError, PermissionError):
    """The caller may not issue this key (HTTP 403): only admins issue for others."""
