"""Improvement marks: the caller's own, or (admins) everyone's.

A non-admin naming another user in `user` is 403 whatever that user is (it says
nothing about them), as for API keys; another user's mark by id is 404.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from adk_yuxi.marks import Mark, MarkStore

from ._auth import Caller, authenticate, host_of
from ._errors import ApiError
from ._openapi import errors
from ._schemas import MarkOut, MarkPage

__all__ = ["router"]

router = APIRouter(prefix="/v1/marks", tags=["marks"])
Auth = Annotated[Caller, Depends(authenticate)]
Time = Annotated[float | None, Query(ge=0, le=1e11, description="Epoch seconds.")]


def _out(mark: Mark) -> MarkOut:
    return MarkOut(
        id=mark.id,
        agent_id=mark.app_name,
        agent_name=mark.agent_name,
        user_id=mark.user_id,
        session_id=mark.session_id,
        run_id=mark.run_id,
        invocation_id=mark.invocation_id,
        call_id=mark.call_id,
        reason=mark.reason,
        created_at=mark.created_at,
    )


def _store(request: Request) -> MarkStore:
    return MarkStore(host_of(request).services.store)


@router.get("", response_model=MarkPage, responses=errors(401, 403, 422))
async def list_marks(
    request: Request,
    caller: Auth,
    agent: Annotated[str | None, Query(max_length=256)] = None,
    user: Annotated[str | None, Query(max_length=256)] = None,
    since: Time = None,
    until: Time = None,
    page_size: Annotated[int, Query(ge=1, le=100)] = 50,
    page_token: Annotated[str | None, Query(max_length=1000)] = None,
) -> MarkPage:
    """Newest first: the caller's marks; an admin's view is everyone's (or one user's
    with `user`). `since` is inclusive, `until` exclusive."""
    admin = caller.principal.is_admin
    if user is not None and user != caller.user_id and not admin:
        raise ApiError(403, "forbidden", "only an admin may list another user's marks")
    if since is not None and until is not None and until < since:
        raise ApiError(422, "invalid_request", "until is before since")
    page = await _store(request).list_marks(
        viewer_id=caller.user_id,
        viewer_is_admin=admin,
        app_name=agent,
        user_id=user,
        since=since,
        until=until,
        page_size=page_size,
        page_token=page_token,
    )
    return MarkPage(marks=[_out(m) for m in page.items], next_page_token=page.next_page_token)


@router.get("/{mark_id}", response_model=MarkOut, responses=errors(401, 404))
async def get_mark(mark_id: str, request: Request, caller: Auth) -> MarkOut:
    found = await _store(request).get(
        mark_id, viewer_id=caller.user_id, viewer_is_admin=caller.principal.is_admin
    )
    if found is None:
        raise ApiError(404, "not_found", "no such mark")
    return _out(found)
