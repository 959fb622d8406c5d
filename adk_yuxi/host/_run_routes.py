"""A session's runs: list, one run, and cancelling it through any worker."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from adk_yuxi.ledger import RunEnded, RunRecord

from ._auth import Caller, authenticate, host_of
from ._openapi import errors
from ._outcome import error_code_of
from ._schemas import RunOut, RunPage
from ._sessions import _own_session

__all__ = ["router"]

router = APIRouter(prefix="/v1/agents/{agent_id}/sessions", tags=["runs"])
Auth = Annotated[Caller, Depends(authenticate)]


def run_json(record: RunRecord) -> dict[str, Any]:
    """What a caller sees of a run: never the worker or a raw error text; its status and
    code as its stream's `run_status` gives them (`error_code_of`)."""
    return {
        "id": record.run_id,
        "session_id": record.session_id,
        "agent_id": record.app_name,
        "invocation_id": record.invocation_id,
        "status": record.status,
        "error_code": error_code_of(record),
        "cancel_requested_at": record.cancel_requested_at,
        "started_at": record.started_at,
        "updated_at": record.updated_at,
        "ended_at": record.ended_at,
    }


@router.get("/{session_id}/runs", response_model=RunPage, responses=errors(401, 404, 422))
async def list_runs(
    agent_id: str,
    session_id: str,
    request: Request,
    caller: Auth,
    page_size: Annotated[int, Query(ge=1, le=100)] = 50,
    page_token: Annotated[str | None, Query(max_length=1000)] = None,
) -> dict[str, Any]:
    """The session's runs, newest first; a run whose worker died is shown failed."""
    host = host_of(request)
    runner, session = await _own_session(request, caller, agent_id, session_id)
    key = {"app_name": runner.app_name, "user_id": caller.user_id, "session_id": session.id}
    await host.control.runs.current(**key)  # closes a lapsed run before it is listed
    page = await host.ledger.list_runs(**key, page_size=page_size, page_token=page_token)
    return {"runs": [run_json(r) for r in page.items], "next_page_token": page.next_page_token}


@router.get("/{session_id}/runs/{run_id}", response_model=RunOut, responses=errors(401, 404, 422))
async def get_run(
    agent_id: str, session_id: str, run_id: str, request: Request, caller: Auth
) -> dict[str, Any]:
    host = host_of(request)
    runner, session = await _own_session(request, caller, agent_id, session_id)
    record = await host.control.runs.get_in_session(
        run_id, app_name=runner.app_name, user_id=caller.user_id, session_id=session.id
    )
    return run_json(record)


@router.post(
    "/{session_id}/runs/{run_id}/cancel",
    status_code=202,
    response_model=RunOut,
    responses={
        200: {"model": RunOut, "description": "closed at once (it was waiting at a waiting point)"},
        202: {"description": "cancel requested; the run's stream ends `cancelled`"},
        **errors(401, 404, 409, 422),
    },
)
async def cancel_run(
    agent_id: str, session_id: str, run_id: str, request: Request, caller: Auth
) -> JSONResponse:
    """Cancels the run through any worker. A running run: 202, its worker aborts it
    within `cancel_poll_seconds` and its stream ends with `run_status` cancelled. A run
    waiting at a waiting point: 200, closed at once with its waiting points cancelled.
    An ended run: 409 `run_ended`; another user's run: 404."""
    host = host_of(request)
    runner, session = await _own_session(request, caller, agent_id, session_id)
    record = await host.control.runs.get_in_session(
        run_id, app_name=runner.app_name, user_id=caller.user_id, session_id=session.id
    )
    record, changed = await host.control.cancel(record)
    if record.status == "running":
        return JSONResponse(run_json(record), status_code=202)
    if changed and record.status == "cancelled":
        return JSONResponse(run_json(record), status_code=200)
    raise RunEnded(record.run_id, record.status)
