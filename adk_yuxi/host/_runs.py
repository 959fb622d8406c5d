"""Runs as server-sent event streams: every ADK event, then the final status.

A run is driven by a task of the process, not by the request: a client that drops the
connection leaves the run going, and `follow_session` (with `Last-Event-ID`) replays
the stored events it missed, follows the run while the ledger says it is running, and
ends with the same final status. Both streams send a heartbeat comment when they have
sent nothing for `heartbeat_seconds` (a long model or tool call), so a proxy's idle
timeout does not cut them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import StreamingResponse
from google.adk.events import Event
from google.adk.runners import Runner
from google.genai import types

from adk_yuxi.ledger import RunNotFound, RunRecord
from adk_yuxi.runtime import host_run_config
from adk_yuxi.sessions import StoredEvents

from ._control import Claim
from ._errors import ApiError
from ._host import Host
from ._outcome import INTERNAL_ERROR, no_run_status, run_status
from ._sse import HEARTBEAT, counted, event_frame, frame

__all__ = ["follow_retried_run", "follow_session", "stream_run"]

log = logging.getLogger("adk_yuxi.host")
_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
_START_WAIT_S = 10.0


async def _status(host: Host, claim: Claim, error_code: str | None) -> dict[str, Any]:
    """The run's final status, from its ledger row as `settle` left it."""
    record: RunRecord | None = claim.final
    if record is None:
        try:
            record = await host.ledger.get(claim.run_id)
        except RunNotFound:  # removed meanwhile (its session was deleted)
            record = None
    if record is not None:
        return run_status(record)
    failed = {"status": "failed", "error_code": error_code or INTERNAL_ERROR}
    return {**failed, "run_id": claim.run_id, "invocation_id": claim.record.invocation_id}


async def _drive(
    host: Host,
    runner: Runner,
    user_id: str,
    session_id: str,
    message: types.Content,
    claim: Claim,
    out: asyncio.Queue[bytes | None],
) -> None:
    invocation: str | None = claim.record.invocation_id
    error_code: str | None = None
    try:
        async for event in runner.run_async(
            user_id=user_id,
            session_id=session_id,
            invocation_id=claim.record.invocation_id,
            new_message=message,
            abort_signal=claim.abort,
            run_config=host_run_config(),
        ):
            invocation = event.invocation_id
            if event.error_code:
                error_code = event.error_code
            out.put_nowait(event_frame(event))
        # A run the ledger plugin never began (refused before it) is closed here, with
        # the code its events ended with, so its row says what its stream said.
        await host.control.settle(
            claim, "failed", f"{error_code or 'run_not_started'}: ended before the ledger began it"
        )
        out.put_nowait(frame("run_status", await _status(host, claim, error_code)))
    except asyncio.CancelledError:
        await host.control.settle(claim, "cancelled", "the worker shut down")
        cancelled = {"status": "cancelled", "run_id": claim.run_id, "invocation_id": invocation}
        out.put_nowait(frame("run_status", cancelled))
        raise
    except Exception:
        # Nothing of the exception reaches the client: the operator log has it.
        log.exception("run failed: app=%s session=%s", runner.app_name, session_id)
        await host.control.settle(claim, "failed", INTERNAL_ERROR)
        failed = {"status": "failed", "invocation_id": invocation, "error_code": INTERNAL_ERROR}
        out.put_nowait(frame("run_status", {**failed, "run_id": claim.run_id}))
    finally:
        out.put_nowait(None)


async def _relay(out: asyncio.Queue[bytes | None], heartbeat_s: float) -> AsyncIterator[bytes]:
    """The run's frames as they come; a heartbeat after `heartbeat_s` without one (a
    long model or tool call), as a followed stream sends them."""
    while True:
        try:
            item = await asyncio.wait_for(out.get(), heartbeat_s)
        except TimeoutError:
            yield HEARTBEAT
            continue
        if item is None:
            return
        yield item


def stream_run(
    host: Host,
    runner: Runner,
    user_id: str,
    session_id: str,
    message: types.Content,
    claim: Claim,
) -> StreamingResponse:
    """Drives the claimed run beside the request; `X-Run-Id` names it (for cancel)."""
    out: asyncio.Queue[bytes | None] = asyncio.Queue()
    host.spawn(_drive(host, runner, user_id, session_id, message, claim, out))
    headers = {**_HEADERS, "X-Run-Id": claim.run_id}
    relay = _relay(out, host.config.heartbeat_seconds)
    return StreamingResponse(counted(relay, "run"), media_type="text/event-stream", headers=headers)


def _after(events: list[Event], cursor: str | None) -> int | None:
    """Index of the first event after `cursor` (None: the cursor is not in the session)."""
    if cursor is None:
        return 0
    for index, event in enumerate(events):
        if event.id == cursor:
            return index + 1
    return None


async def _current(host: Host, runner: Runner, user_id: str, session_id: str) -> dict[str, Any]:
    """The status of the session's latest run (`none` when it has no recorded run); one
    whose worker's lease lapsed is closed as failed (`worker_lease_expired`) here, so no
    follower waits for it."""
    record = await host.control.runs.current(
        app_name=runner.app_name, user_id=user_id, session_id=session_id
    )
    return no_run_status() if record is None else run_status(record)


async def _status_of(
    host: Host, runner: Runner, user_id: str, session_id: str, run: RunRecord
) -> dict[str, Any]:
    """The status of one run (closed as failed here if its worker's lease lapsed)."""
    record = await host.control.runs.get_in_session(
        run.run_id, app_name=runner.app_name, user_id=user_id, session_id=session_id
    )
    return run_status(record)


async def follow_session(
    host: Host,
    runner: Runner,
    user_id: str,
    session_id: str,
    cursor: str | None,
    *,
    run: RunRecord | None = None,
) -> StreamingResponse:
    """The session's stored events after `cursor`, then its latest run followed from
    the database until the ledger closes it; a cursor not in the session is 422. With
    `run`, that run's events only, its own status, and `X-Run-Id` naming it: what an
    idempotent retry answers, however many runs came after it."""
    service = host.services.session_service

    async def read(after_seq: int = 0) -> StoredEvents | None:
        """What the session stored after `after_seq`: a poll reads only what is new."""
        return await service.events_after(
            app_name=runner.app_name, user_id=user_id, session_id=session_id, after_seq=after_seq
        )

    stored = await read()
    if stored is None:
        raise ApiError(404, "not_found", "no such session")
    start = _after(stored.events, cursor)
    if start is None:
        raise ApiError(422, "invalid_cursor", "Last-Event-ID names no event of this session")
    only = None if run is None else run.invocation_id

    def frames_of(events: list[Event]) -> list[bytes]:
        return [event_frame(e) for e in events if only is None or e.invocation_id == only]

    async def status() -> dict[str, Any]:
        if run is None:
            return await _current(host, runner, user_id, session_id)
        return await _status_of(host, runner, user_id, session_id, run)

    async def frames() -> AsyncIterator[bytes]:
        events, index, seen = stored.events, start, stored
        beat = time.monotonic()  # when the client last got something
        deadline = beat + host.config.follow_seconds
        while True:
            for chunk in frames_of(events[index:]):
                beat = time.monotonic()
                yield chunk
            current = await status()
            if current["status"] != "running" or time.monotonic() > deadline:
                # Read once more after the ledger closed the run: its tail is stored.
                again = await read(seen.last_seq)
                if again is not None and again.row_id == seen.row_id:
                    for chunk in frames_of(again.events):
                        yield chunk
                yield frame("run_status", current)
                return
            if time.monotonic() - beat >= host.config.heartbeat_seconds:
                beat = time.monotonic()
                yield HEARTBEAT
            await asyncio.sleep(host.config.poll_seconds)
            fresh = await read(seen.last_seq)
            if fresh is None or fresh.row_id != seen.row_id:
                yield frame("run_status", {"status": "gone"})
                return
            events, index, seen = fresh.events, 0, fresh

    headers = _HEADERS if run is None else {**_HEADERS, "X-Run-Id": run.run_id}
    return StreamingResponse(
        counted(frames(), "follow"), media_type="text/event-stream", headers=headers
    )


async def follow_retried_run(
    host: Host,
    runner: Runner,
    user_id: str,
    session_id: str,
    first: dict[str, Any],
    key: tuple[str, str],
) -> StreamingResponse:
    """An idempotent retry of a new message: the run its first request started, from
    the cursor that request recorded. A retry that overtakes the first request waits
    for its run to be recorded; 409 if that request was refused (it released the key)."""
    invocation = first.get("invocation_id")
    if not isinstance(invocation, str):  # a key recorded before keys named their run
        return await follow_session(host, runner, user_id, session_id, first.get("cursor"))
    deadline = time.monotonic() + _START_WAIT_S
    while True:
        record = await host.ledger.find(
            app_name=runner.app_name,
            user_id=user_id,
            session_id=session_id,
            invocation_id=invocation,
        )
        if record is not None:
            break
        if not await host.idempotency.held(user_id, *key):
            raise ApiError(
                409, "conflict", "the first request with this Idempotency-Key was refused"
            )
        if time.monotonic() > deadline:
            raise ApiError(
                409,
                "conflict",
                "the first request with this Idempotency-Key is still starting; retry",
            )
        await asyncio.sleep(host.config.poll_seconds)
    return await follow_session(host, runner, user_id, session_id, first.get("cursor"), run=record)
