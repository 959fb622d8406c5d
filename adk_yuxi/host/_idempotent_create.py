"""`Idempotency-Key` on creating a session: every retry answers with the session the
first request created, however the requests interleave across workers.

The key is claimed with the id the session will have and ``created: false``; once the
session exists, the first request records ``created: true``. A retry that finds the key
claimed waits for that outcome, as answer retries do: created, it answers with the
session; released (the first request was refused or failed), it starts over as a new
request; no outcome within a bound (the first request died between its claim and its
create), it creates the session itself, or finds it created.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

from google.adk.runners import Runner
from google.adk.sessions import Session

from adk_yuxi.storage import SessionExistsError

from ._errors import ApiError
from ._host import Host
from ._idempotency import body_hash, check_key

__all__ = ["create_session_once", "creation_results"]

_CREATE_WAIT_S = 10.0
_ATTEMPTS = 3


def _made(session_id: str, created: bool) -> dict[str, Any]:
    return {"session_id": session_id, "created": created}


def creation_results(session_id: str) -> list[str]:
    """Every result text a create key of `session_id` may hold (to forget them)."""
    return [json.dumps(_made(session_id, c)) for c in (False, True)] + [
        json.dumps({"session_id": session_id})  # written before `created` existed
    ]


async def _create(host: Host, runner: Runner, user_id: str, session_id: str | None) -> Session:
    try:
        return await host.services.session_service.create_session(
            app_name=runner.app_name, user_id=user_id, session_id=session_id
        )
    except SessionExistsError as exc:
        raise ApiError(409, "conflict", "a session with this id exists") from exc


async def _existing(host: Host, runner: Runner, user_id: str, session_id: str) -> Session:
    session = await host.services.session_service.get_session(
        app_name=runner.app_name, user_id=user_id, session_id=session_id
    )
    if session is None:  # created, then deleted
        raise ApiError(404, "not_found", "no such session")
    return session


async def create_session_once(
    host: Host, runner: Runner, user_id: str, agent_id: str, requested: str | None, key: str | None
) -> Session:
    """The new session (`requested` id or a fresh one); with `key`, the one session
    every request with this key and body answers with. 409 if the id exists."""
    if key is None:
        return await _create(host, runner, user_id, requested)
    scope, key = f"session:{agent_id}", check_key(key)
    digest = body_hash({"session_id": requested})
    for _ in range(_ATTEMPTS):
        claimed, first = await host.idempotency.claim(
            user_id, scope, key, digest, _made(requested or uuid.uuid4().hex, False)
        )
        session_id = str(first["session_id"])
        if claimed:
            return await _first(host, runner, user_id, (scope, key), session_id)
        outcome = await _wait_for_first(host, user_id, (scope, key), first)
        if outcome is None:
            continue  # released: this request starts over
        if outcome:
            return await _existing(host, runner, user_id, session_id)
        # No outcome in time: the first request died after its claim.
        return await _first(host, runner, user_id, (scope, key), session_id)
    raise ApiError(409, "conflict", "this Idempotency-Key is in use; retry")


async def _first(
    host: Host, runner: Runner, user_id: str, claim: tuple[str, str], session_id: str
) -> Session:
    """Creates the session for the claim and records it created; a refusal releases
    the claim unless the session was created for it meanwhile (taken over)."""
    scope, key = claim
    try:
        session = await _create(host, runner, user_id, session_id)
    except Exception:
        now = await host.idempotency.result(user_id, scope, key)
        if now is not None and now.get("created") is True:
            return await _existing(host, runner, user_id, session_id)
        await host.idempotency.release(user_id, scope, key)
        raise
    await host.idempotency.record(user_id, scope, key, _made(session_id, True))
    return session


async def _wait_for_first(
    host: Host, user_id: str, claim: tuple[str, str], first: dict[str, Any]
) -> bool | None:
    """True once the first request created the session (a result without the flag
    is from before it existed: created); None if it released the key; False if
    nothing happened within the bound."""
    deadline = time.monotonic() + _CREATE_WAIT_S
    current: dict[str, Any] | None = first
    while current is not None:
        if current.get("created", True) is True:
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(host.config.poll_seconds)
        current = await host.idempotency.result(user_id, *claim)
    return None
