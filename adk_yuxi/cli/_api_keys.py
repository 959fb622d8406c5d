"""`yuxi api-key issue | list | revoke`: the host API's keys, as the database's operator."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import click

from ._database import DB_OPTION
from ._table import echo_cells

if TYPE_CHECKING:
    from adk_yuxi.apikeys import ApiKey, ApiKeyStore

__all__ = ["api_key"]

T = TypeVar("T")
_USER_HINT = "see `yuxi access user add ID` and `yuxi access user enable ID`"


def _run(db: str, work: Callable[[ApiKeyStore], Awaitable[T]]) -> T:
    """Runs `work(keys)` on `db`; library errors become one-line CLI errors."""
    from adk_yuxi.apikeys import ApiKeyForbidden, ApiKeyStore
    from adk_yuxi.errors import YuxiError
    from adk_yuxi.storage import open_services

    async def main() -> T:
        services = open_services(db)
        try:
            return await work(ApiKeyStore(services.store))
        finally:
            await services.close()

    try:
        return asyncio.run(main())
    except ApiKeyForbidden as exc:
        raise click.ClickException(f"{exc} ({_USER_HINT})") from None
    except (YuxiError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _state(key: ApiKey, now: float) -> str:
    if key.revoked_at is not None:
        return f"revoked {_when(key.revoked_at)}"
    if key.expires_at is not None and key.expires_at <= now:
        return f"expired {_when(key.expires_at)}"
    return "active" if key.expires_at is None else f"active until {_when(key.expires_at)}"


@click.group("api-key")
def api_key() -> None:
    """Issue, list and revoke the host API's keys (as the database's operator)."""


@api_key.command("issue")
@DB_OPTION
@click.option("--user", "user_id", required=True, help="The user the key acts as.")
@click.option("--by", "issued_by", default=None, help="Issuer (default: the user itself).")
@click.option("--label", default="", help="A note kept with the key.")
@click.option("--ttl", "ttl_seconds", type=float, default=None, help="Lifetime in seconds.")
def issue(
    db: str, user_id: str, issued_by: str | None, label: str, ttl_seconds: float | None
) -> None:
    """Print a new key's token (shown once; only its hash is stored).

    `yuxi api-key list` shows its id, which `yuxi api-key revoke` takes.
    """

    async def work(keys: ApiKeyStore) -> str:
        issued = await keys.issue(
            user_id, issued_by=issued_by or user_id, label=label, ttl_seconds=ttl_seconds
        )
        return issued.token

    click.echo(_run(db, work))


@api_key.command("list")
@DB_OPTION
@click.option("--user", "user_id", default=None, help="Only this user's keys.")
def list_keys(db: str, user_id: str | None) -> None:
    """One line per key, newest first: id, user, state, created, label (never a token)."""

    async def work(keys: ApiKeyStore) -> list[ApiKey]:
        return await keys.all_keys(user_id)

    now = time.time()
    for key in _run(db, work):
        echo_cells([key.id, key.user_id, _state(key, now), _when(key.created_at), key.label])


@api_key.command("revoke")
@click.argument("key_id")
@DB_OPTION
def revoke(key_id: str, db: str) -> None:
    """Revoke the key KEY_ID (an id from `yuxi api-key list`) at once, for every worker.

    Revoking a revoked key keeps its first revocation time.
    """

    async def work(keys: ApiKeyStore) -> ApiKey:
        key = await keys.get_key(key_id)
        return await keys.revoke(key.id, by=key.user_id)

    key = _run(db, work)
    echo_cells([key.id, key.user_id, f"revoked {_when(key.revoked_at)}"])
