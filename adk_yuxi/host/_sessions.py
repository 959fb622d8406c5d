"""Sessions of the caller, runs in them, and their waiting points."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import StreamingResponse
from google.adk.agents.invocation_context import new_invocation_context_id
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from adk_yuxi.ledger import RunInProgress, RunRecord, RunWaiting
from adk_yuxi.waitpoints import Waitpoint, WaitpointConflict

from ._auth import Caller, authenticate, host_of
from ._errors import ApiError
from ._host import Host
from ._idempotency import body_hash, check_key
from ._idempotent_answer import claim_answer
from ._idempotent_create import create_session_once
from ._openapi import EventStream, errors, event_stream
from ._runs import follow_retried_run, follow_session, stream_run
from ._schemas import SessionDetail, SessionOut, SessionPage, WaitpointPage
from ._session_delete import purge_session

__all__ = ["router"]

router = APIRouter(prefix="/v1/agents/{agent_id}/sessions", tags=["sessions"])
Auth = Annotated[Caller, Depends(authenticate)]
_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=r"^[\x21-\x7e]{1,128}$",
        description="1-128 visible ASCII characters: a retry with the same key and body"
        " answers as the first request did and starts nothing; another body is 409.",
    ),
]


class NewSession(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str | None = Field(default=None, pattern=_ID_PATTERN)


class NewMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=100_000)


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answers: dict[str, Any]


def _session(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "agent_id": session.app_name,
        "last_update_time": session.last_update_time,
    }


async def _own_session(
    request: Request, caller: Caller, agent_id: str, session_id: str, recent: int | None = None
) -> Any:
    """The caller's session (404 otherwise), with its last `recent` events (all: None)."""
    host = host_of(request)
    runner = host.runner_for(caller.principal, agent_id)
    session = await host.services.session_service.get_session(
        app_name=runner.app_name,
        user_id=caller.user_id,
        session_id=session_id,
        config=GetSessionConfig(num_recent_events=recent) if recent is not None else None,
    )
    if session is None:
        raise ApiError(404, "not_found", "no such session")
    return runner, session


@router.post(
    "", status_code=201, response_model=SessionOut, responses=errors(401, 404, 409, 413, 415, 422)
)
async def create_session(
    agent_id: str,
    request: Request,
    caller: Auth,
    body: NewSession | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    """A new session; with `Idempotency-Key`, a retry answers with the same session."""
    host = host_of(request)
    runner = host.runner_for(caller.principal, agent_id)
    requested = body.session_id if body is not None else None
    session = await create_session_once(
        host, runner, caller.user_id, agent_id, requested, idempotency_key
    )
    return _session(session)


@router.get("", response_model=SessionPage, responses=errors(401, 404, 422))
async def list_sessions(
    agent_id: str,
    request: Request,
    caller: Auth,
    page_size: Annotated[int, Query(ge=1, le=100)] = 50,
    page_token: Annotated[str | None, Query(max_length=1000)] = None,
) -> dict[str, Any]:
    host = host_of(request)
    runner = host.runner_for(caller.principal, agent_id)
    page = await host.services.session_service.list_sessions_page(
        app_name=runner.app_name,
        user_id=caller.user_id,
        page_size=page_size,
        page_token=page_token,
    )
    return {
        "sessions": [_session(s) for s in page.sessions],
        "next_page_token": page.next_page_token,
    }


@router.get("/{session_id}", response_model=SessionDetail, responses=errors(401, 404, 422))
async def get_session(
    agent_id: str, session_id: str, request: Request, caller: Auth
) -> dict[str, Any]:
    _, session = await _own_session(request, caller, agent_id, session_id)
    return {**_session(session), "event_count": len(session.events)}


@router.delete("/{session_id}", status_code=204, responses=errors(401, 404, 409, 422))
async def delete_session(
    agent_id: str, session_id: str, request: Request, caller: Auth
) -> Response:
    """Deletes the session with its runs, waiting points, idempotency keys and
    artifacts (a run waiting for an answer goes with it); 409 `run_in_progress` while
    a run is running, and nothing changes: cancel it first."""
    runner, session = await _own_session(request, caller, agent_id, session_id)
    host = host_of(request)
    await purge_session(host, agent_id, runner.app_name, caller.user_id, session.id)
    return Response(status_code=204)


@router.post(
    "/{session_id}/runs",
    response_class=EventStream,
    responses=event_stream(401, 404, 409, 413, 415, 422),
)
async def run(
    agent_id: str,
    session_id: str,
    body: NewMessage,
    request: Request,
    caller: Auth,
    idempotency_key: IdempotencyKey = None,
) -> StreamingResponse:
    """A new message; the answer is a `text/event-stream` of ADK events (`adk_event`,
    each with its event id) ending with one `run_status` event. With
    `Idempotency-Key`, a retry starts nothing and streams the first run's events."""
    host = host_of(request)
    # No events (the Runner reads the whole session), or the last one only: the
    # idempotency cursor.
    recent = 0 if idempotency_key is None else 1
    runner, session = await _own_session(request, caller, agent_id, session_id, recent=recent)
    invocation = new_invocation_context_id()
    scope = f"run:{agent_id}:{session.id}"
    if idempotency_key is not None:
        cursor = session.events[-1].id if session.events else None
        key = check_key(idempotency_key)
        claimed, first = await host.idempotency.claim(
            caller.user_id,
            scope,
            key,
            body_hash(body.model_dump()),
            {"cursor": cursor, "invocation_id": invocation},
        )
        if not claimed:
            return await follow_retried_run(
                host, runner, caller.user_id, session.id, first, (scope, key)
            )
    try:
        claim = await host.control.claim_new(runner, caller.user_id, session.id, invocation)
    except (RunInProgress, RunWaiting):
        if idempotency_key is not None:  # a refused run leaves no claim of its key
            await host.idempotency.release(caller.user_id, scope, key)
        raise
    if not await _still_there(host, runner, caller.user_id, session.id):
        # Deleted between the read above and the claim: the run never starts, and
        # nothing of it is left for a session re-created with this id.
        await host.control.withdraw(claim)
        if idempotency_key is not None:
            await host.idempotency.release(caller.user_id, scope, key)
        raise ApiError(404, "not_found", "no such session")
    message = types.Content(role="user", parts=[types.Part(text=body.text)])
    return stream_run(host, runner, caller.user_id, session.id, message, claim)


async def _still_there(host: Host, runner: Any, user_id: str, session_id: str) -> bool:
    found = await host.services.session_service.get_session(
        app_name=runner.app_name,
        user_id=user_id,
        session_id=session_id,
        config=GetSessionConfig(num_recent_events=0),
    )
    return found is not None


@router.get(
    "/{session_id}/events", response_class=EventStream, responses=event_stream(401, 404, 422)
)
async def follow(
    agent_id: str,
    session_id: str,
    request: Request,
    caller: Auth,
    last_event_id: Annotated[str | None, Header(max_length=200)] = None,
) -> StreamingResponse:
    """The stored events after `Last-Event-ID` (all without it), then the latest run
    followed until it ends, with heartbeats, and its `run_status`."""
    runner, session = await _own_session(request, caller, agent_id, session_id)
    return await follow_session(host_of(request), runner, caller.user_id, session.id, last_event_id)


@router.get(
    "/{session_id}/waitpoints", response_model=WaitpointPage, responses=errors(401, 404, 422)
)
async def pending_waitpoints(
    agent_id: str,
    session_id: str,
    request: Request,
    caller: Auth,
    page_size: Annotated[int, Query(ge=1, le=100)] = 50,
    page_token: Annotated[str | None, Query(max_length=1000)] = None,
) -> dict[str, Any]:
    runner, session = await _own_session(request, caller, agent_id, session_id)
    try:
        page = await host_of(request).waitpoints.list_pending(
            app_name=runner.app_name,
            user_id=caller.user_id,
            session_id=session.id,
            page_size=page_size,
            page_token=page_token,
        )
    except ValueError as exc:
        raise ApiError(422, "invalid_request", "invalid page token") from exc
    return {
        "waitpoints": [_waitpoint(p.to_dict()) for p in page.items],
        "next_page_token": page.next_page_token,
    }


def _waitpoint(data: dict[str, Any]) -> dict[str, Any]:
    data.pop("user_id", None)
    data["agent_id"] = data.pop("app_name")
    return data


@router.post(
    "/{session_id}/waitpoints/{waitpoint_id}/answer",
    response_class=EventStream,
    responses=event_stream(401, 404, 409, 413, 415, 422),
)
async def answer_waitpoint(
    agent_id: str,
    session_id: str,
    waitpoint_id: str,
    body: Answer,
    request: Request,
    caller: Auth,
    idempotency_key: IdempotencyKey = None,
) -> StreamingResponse:
    """Records the answer (409 if the point is answered or cancelled already, or its
    run is running or cancelled) and resumes the paused run, streamed as `runs`
    streams. With `Idempotency-Key`, a retry records nothing and streams the
    resumed run from where it began."""
    host = host_of(request)
    runner, session = await _own_session(request, caller, agent_id, session_id)
    point = await host.waitpoints.get(waitpoint_id, user_id=caller.user_id)
    if point.app_name != runner.app_name or point.session_id != session.id:
        raise ApiError(404, "not_found", "no such waiting point")
    claim = await claim_answer(
        host, caller.user_id, agent_id, session, point.id, body.answers, idempotency_key
    )
    if claim.replay:
        await claim.wait_for_resume(point.id)
        resumed = await host.ledger.find(
            app_name=runner.app_name,
            user_id=caller.user_id,
            session_id=session.id,
            invocation_id=point.invocation_id,
        )
        return await follow_session(
            host, runner, caller.user_id, session.id, claim.cursor, run=resumed
        )
    async with claim.released_on_error():
        run = await host.control.claim_resume(runner, await _paused_run(host, point))
        try:
            answered = await host.waitpoints.answer(point.id, body.answers, user_id=caller.user_id)
        except BaseException:
            await host.control.release(run)  # the run waits again; nothing else changed
            raise
    return stream_run(host, runner, caller.user_id, session.id, answered.resume_message(), run)


async def _paused_run(host: Host, point: Waitpoint) -> RunRecord:
    """The run paused at `point` (409 when the point is settled or the run is gone)."""
    if point.status != "pending":
        raise WaitpointConflict(point.id, point.status)
    run = await host.ledger.find(
        app_name=point.app_name,
        user_id=point.user_id,
        session_id=point.session_id,
        invocation_id=point.invocation_id,
    )
    if run is None:
        raise ApiError(409, "conflict", "the waiting point's run is not recorded")
    return run
