"""Every endpoint but the health check needs a live API key: `Authorization: Bearer`."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from adk_yuxi.access import NotFoundError, Principal
from adk_yuxi.apikeys import ApiKey, InvalidApiKey

from ._errors import ApiError
from ._host import Host

__all__ = ["Caller", "authenticate", "host_of"]


@dataclass(frozen=True)
class Caller:
    """The key a request came with and its user's principal as of this request."""

    key: ApiKey
    principal: Principal

    @property
    def user_id(self) -> str:
        return self.principal.user_id


def host_of(request: Request) -> Host:
    host: Host = request.app.state.host
    return host


async def authenticate(request: Request) -> Caller:
    """The FastAPI dependency of every authenticated route."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "unauthenticated", "an API key is required (Authorization: Bearer)")
    host = host_of(request)
    key, marker = await host.keys.resolve_marked(token.strip())
    try:
        principal = await host.access.load_principal(key.user_id, marker=marker)
    except NotFoundError as exc:
        raise InvalidApiKey() from exc
    if not principal.user.active:
        raise InvalidApiKey()
    return Caller(key=key, principal=principal)
