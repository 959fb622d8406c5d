"""`Idempotency-Key` on answering a waiting point.

The key is claimed before the answer is recorded, with the session's last event id:
a retry records nothing and streams the session from that position, which is the
resumed run as the first request streamed it. An answer that is refused (409, 422)
releases the claim, so a corrected retry with the same key is not stuck. A retry that
overtakes the first request waits until the answer is recorded and the resumed run has
begun, so its replay does not end on the old pause.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from google.adk.sessions import Session

from ._errors import ApiError
from ._host import Host
from ._idempotency import body_hash, check_key

__all__ = ["AnswerClaim", "claim_answer"]

_RESUME_WAIT_S = 10.0


@dataclass(frozen=True)
class AnswerClaim:
    """`replay` is True for a retry; `cursor` is where its stream starts."""

    host: Host
    user_id: str
    scope: str
    key: str | None
    replay: bool
    cursor: str | None

    @asynccontextmanager
    async def released_on_error(self) -> AsyncIterator[None]:
        """Forgets this request's claim if the work inside fails."""
        try:
            yield
        except Exception:
            if self.key is not None and not self.replay:
                await self.host.idempotency.release(self.user_id, self.scope, self.key)
            raise

    async def wait_for_resume(self, waitpoint_id: str) -> None:
        """For a retry: returns once the first request recorded the answer and the
        resumed run began (or after a bound, for a first request that died between the
        two); 409 if the first request was refused and released the key."""
        assert self.key is not None
        host = self.host
        deadline = time.monotonic() + _RESUME_WAIT_S
        while time.monotonic() < deadline:
            point = await host.waitpoints.get(waitpoint_id, user_id=self.user_id)
            if point.status != "pending":
                record = await host.ledger.find(
                    app_name=point.app_name,
                    user_id=self.user_id,
                    session_id=point.session_id,
                    invocation_id=point.invocation_id,
                )
                if record is None or record.updated_at >= point.updated_at:
                    return
            elif not await host.idempotency.held(self.user_id, self.scope, self.key):
                raise ApiError(
                    409, "conflict", "the first request with this Idempotency-Key was refused"
                )
            await asyncio.sleep(host.config.poll_seconds)


async def claim_answer(
    host: Host,
    user_id: str,
    agent_id: str,
    session: Session,
    waitpoint_id: str,
    answers: dict[str, Any],
    key: str | None,
) -> AnswerClaim:
    """Claims `key` (if any) for this answer; 409 if it was used with another body."""
    scope = f"answer:{agent_id}:{session.id}"
    cursor = session.events[-1].id if session.events else None
    if key is None:
        return AnswerClaim(host, user_id, scope, None, False, cursor)
    claimed, first = await host.idempotency.claim(
        user_id,
        scope,
        check_key(key),
        body_hash({"waitpoint_id": waitpoint_id, "answers": answers}),
        {"cursor": cursor},
    )
    return AnswerClaim(host, user_id, scope, key, not claimed, first["cursor"])
