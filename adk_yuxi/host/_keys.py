"""Agents the caller may use, and API keys: issued per user, listed, revoked."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from ._auth import Caller, authenticate, host_of
from ._errors import ApiError
from ._openapi import errors
from ._schemas import AgentList, KeyIssued, KeyList, KeyRevoked

__all__ = ["router"]

router = APIRouter(prefix="/v1")
Auth = Annotated[Caller, Depends(authenticate)]


class NewKey(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = Field(default="", max_length=200)
    ttl_seconds: float | None = Field(default=None, gt=0, le=10 * 365 * 86400)


def _user(caller: Caller, user_id: str) -> str:
    """`me` is the caller; anyone else needs an admin."""
    target = caller.user_id if user_id == "me" else user_id
    if target != caller.user_id and not caller.principal.is_admin:
        raise ApiError(403, "forbidden", "only an admin may manage another user's keys")
    return target


@router.get("/agents", tags=["agents"], response_model=AgentList, responses=errors(401))
async def list_agents(request: Request, caller: Auth) -> dict[str, Any]:
    agents = host_of(request).usable_agents(caller.principal)
    return {"agents": [{"id": a.name, "description": a.description} for a in agents]}


@router.post(
    "/users/{user_id}/api-keys",
    status_code=201,
    tags=["api keys"],
    response_model=KeyIssued,
    responses=errors(401, 403, 413, 415, 422),
)
async def issue_key(user_id: str, body: NewKey, request: Request, caller: Auth) -> dict[str, Any]:
    """A new key; its token is in this response only."""
    issued = await host_of(request).keys.issue(
        _user(caller, user_id),
        issued_by=caller.user_id,
        label=body.label,
        ttl_seconds=body.ttl_seconds,
    )
    return {"key": issued.key.to_dict(), "token": issued.token}


@router.get(
    "/users/{user_id}/api-keys",
    tags=["api keys"],
    response_model=KeyList,
    responses=errors(401, 403),
)
async def list_keys(user_id: str, request: Request, caller: Auth) -> dict[str, Any]:
    keys = await host_of(request).keys.list_keys(_user(caller, user_id), by=caller.user_id)
    return {"keys": [k.to_dict() for k in keys]}


@router.delete(
    "/api-keys/{key_id}", tags=["api keys"], response_model=KeyRevoked, responses=errors(401, 404)
)
async def revoke_key(key_id: str, request: Request, caller: Auth) -> dict[str, Any]:
    key = await host_of(request).keys.revoke(key_id, by=caller.user_id)
    return {"key": key.to_dict()}
