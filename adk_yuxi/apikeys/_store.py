"""Issue, resolve and revoke API keys in the platform database."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._sql import register_schema_part
from .._sql.store import SqlStore, Tx
from ..access import AccessError, Role
from ._errors import ApiKeyForbidden, ApiKeyNotFound, InvalidApiKey
from ._schema import API_KEYS_PART

__all__ = ["TOKEN_PREFIX", "ApiKey", "ApiKeyStore", "IssuedKey"]

TOKEN_PREFIX = "yxk_"
_MAX_TOKEN = 200
_MAX_LABEL = 200
_COLUMNS = "id, user_id, label, created_by, created_at, expires_at, revoked_at"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ApiKey:
    """A stored key, never its token."""

    id: str
    user_id: str
    label: str
    created_by: str
    created_at: float
    expires_at: float | None
    revoked_at: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "label": self.label,
            "created_by": self.created_by,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "revoked_at": self.revoked_at,
        }


@dataclass(frozen=True)
class IssuedKey:
    """A new key and its token, which is shown this once."""

    key: ApiKey
    token: str


def _row(row: Sequence[Any]) -> ApiKey:
    ident, user_id, label, created_by, created_at, expires_at, revoked_at = row
    return ApiKey(ident, user_id, label, created_by, created_at, expires_at, revoked_at)


async def _active_user(tx: Tx, user_id: str) -> tuple[Role, bool] | None:
    row = await tx.fetchone("SELECT role, active FROM yx_users WHERE id = :id", {"id": user_id})
    return None if row is None else (Role(row[0]), bool(row[1]))


async def _may_manage(tx: Tx, by: str, user_id: str) -> bool:
    """`by` is `user_id`, or an active account that may act for it."""
    if by == user_id:
        return True
    actor = await _active_user(tx, by)
    if actor is None or not actor[1]:
        return False
    owner = await _active_user(tx, user_id)
    return actor[0].may_act_for(owner[0] if owner is not None else Role.USER)


class ApiKeyStore:
    """API keys on a shared `SqlStore` (the access tables' database)."""

    def __init__(self, store: SqlStore) -> None:
        self._store = store
        register_schema_part(API_KEYS_PART)  # its table, in every store it works on

    async def issue(
        self,
        user_id: str,
        *,
        issued_by: str,
        label: str = "",
        ttl_seconds: float | None = None,
    ) -> IssuedKey:
        """A new key for `user_id`. `issued_by` must be that user or an active admin,
        and the user must exist and be active (`ApiKeyForbidden` otherwise)."""
        if len(label) > _MAX_LABEL:
            raise ValueError(f"label longer than {_MAX_LABEL} characters")
        if ttl_seconds is not None and not ttl_seconds > 0:
            raise ValueError("ttl_seconds must be positive")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = time.time()
        key = ApiKey(
            id=uuid.uuid4().hex,
            user_id=user_id,
            label=label,
            created_by=issued_by,
            created_at=now,
            expires_at=None if ttl_seconds is None else now + ttl_seconds,
            revoked_at=None,
        )
        async with self._store.write() as tx:
            issuer = await _active_user(tx, issued_by)
            if issuer is None or not issuer[1]:
                raise ApiKeyForbidden("the issuing account is unknown or disabled")
            if issued_by != user_id and not issuer[0].is_admin:
                raise ApiKeyForbidden("only an admin may issue keys for another user")
            target = await _active_user(tx, user_id)
            if target is None or not target[1]:
                raise ApiKeyForbidden("keys are issued only for active users")
            if issued_by != user_id and not issuer[0].may_act_for(target[0]):
                raise ApiKeyForbidden("only a superadmin may issue keys for a superadmin")
            await tx.execute(
                f"INSERT INTO yx_api_keys ({_COLUMNS}, token_hash) VALUES (:id, :user_id,"
                " :label, :created_by, :created_at, :expires_at, :revoked_at, :token_hash)",
                {**key.to_dict(), "token_hash": _hash(token)},
            )
        return IssuedKey(key=key, token=token)

    async def resolve(self, token: str) -> ApiKey:
        """The live key of `token`; `InvalidApiKey` for anything else (one message)."""
        return (await self.resolve_marked(token))[0]

    async def resolve_marked(self, token: str) -> tuple[ApiKey, int]:
        """`resolve`, and the access change marker read in the same statement (one
        snapshot), for `AccessRepository.load_principal(marker=)` in the same request:
        the key and the principal then cost one statement when nothing changed."""
        if not token.startswith(TOKEN_PREFIX) or len(token) > _MAX_TOKEN:
            raise InvalidApiKey()
        digest = _hash(token)
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS}, token_hash,"
                " (SELECT version FROM yx_access_version WHERE id = 1) FROM yx_api_keys k"
                " WHERE token_hash = :hash AND EXISTS (SELECT 1 FROM yx_users u"
                " WHERE u.id = k.user_id AND u.active = :active)",
                {"hash": digest, "active": True},
            )
        if row is None or not hmac.compare_digest(str(row[7]), digest):
            raise InvalidApiKey()
        if row[8] is None:  # as `AccessRepository.change_marker` says it
            raise AccessError("the access change marker row is missing")
        key = _row(row[:7])
        if key.revoked_at is not None:
            raise InvalidApiKey()
        if key.expires_at is not None and key.expires_at <= time.time():
            raise InvalidApiKey()
        return key, int(row[8])

    async def revoke(self, key_id: str, *, by: str) -> ApiKey:
        """Revokes a key of `by`, or of someone `by` may act for (`Role.may_act_for`, as
        the accounts are now); a second revoke keeps the first time. A key `by` may not
        revoke is `ApiKeyNotFound`, as a missing one."""
        async with self._store.write() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM yx_api_keys WHERE id = :id", {"id": key_id}
            )
            if row is None or not await _may_manage(tx, by, str(row[1])):
                raise ApiKeyNotFound(key_id)
            await tx.execute(
                "UPDATE yx_api_keys SET revoked_at = :now WHERE id = :id AND revoked_at IS NULL",
                {"id": key_id, "now": time.time()},
            )
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM yx_api_keys WHERE id = :id", {"id": key_id}
            )
        assert row is not None
        return _row(row)

    async def list_keys(self, user_id: str, *, by: str | None = None) -> list[ApiKey]:
        """The keys of `user_id`, newest first (tokens are never readable). With `by`,
        only if `by` is that user or may act for them (`ApiKeyForbidden` otherwise)."""
        async with self._store.read() as tx:
            if by is not None and not await _may_manage(tx, by, user_id):
                raise ApiKeyForbidden("only an admin may see another user's keys")
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM yx_api_keys WHERE user_id = :user"
                " ORDER BY created_at DESC, id DESC",
                {"user": user_id},
            )
        return [_row(r) for r in rows]

    async def get_key(self, key_id: str) -> ApiKey:
        """The stored key `key_id` (`ApiKeyNotFound` if none), for the database's operator:
        no rights check, so it is not for a request's caller."""
        async with self._store.read() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM yx_api_keys WHERE id = :id", {"id": key_id}
            )
        if row is None:
            raise ApiKeyNotFound(key_id)
        return _row(row)

    async def all_keys(self, user_id: str | None = None) -> list[ApiKey]:
        """Every key, or those of `user_id`, newest first: the operator's view (`yuxi
        api-key list`), with no rights check; a request's caller goes through `list_keys`."""
        where, params = ("WHERE user_id = :user", {"user": user_id}) if user_id else ("", {})
        async with self._store.read() as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM yx_api_keys {where} ORDER BY created_at DESC, id DESC",
                params,
            )
        return [_row(r) for r in rows]
