"""The caller's artifacts: names, versions and downloads, per session and `user:`-scoped.

Names may hold `/` (present_artifacts saves relative paths), so a name is the rest of
the path; the version list therefore lives under its own collection
(`…/artifact-versions/{name}`) rather than after the name, where `a/versions` would be
ambiguous. Names are checked here before they reach the artifact service; a download
streams the content-addressed payload file instead of loading it whole.
"""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import StreamingResponse
from google.adk.runners import Runner
from starlette.concurrency import iterate_in_threadpool

from adk_yuxi.artifacts import ArtifactNotStoredError, SqlArtifactService

from ._auth import Caller, authenticate, host_of
from ._errors import ApiError
from ._openapi import DOWNLOAD, errors
from ._schemas import ArtifactList, ArtifactName, ArtifactVersionList, ArtifactVersionOut

__all__ = ["router"]

router = APIRouter(prefix="/v1/agents/{agent_id}", tags=["artifacts"])
Auth = Annotated[Caller, Depends(authenticate)]
Name = Annotated[str, Path(description="The artifact name as listed; it may contain `/`.")]
Version = Annotated[int | None, Query(ge=0, le=2**62, description="Default: the latest.")]
USER_PREFIX = "user:"
# Bytes read per thread hop: ~1.5 MiB peak per download (bench_artifact_download).
_CHUNK = 256 * 1024
_UNSAFE = re.compile("[\x00-\x1f\x7f\\\\]")
_TOKEN = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_MIME = re.compile(f"^{_TOKEN}/{_TOKEN}$")
_ASCII_NAME = re.compile(r"[^A-Za-z0-9._-]")


def check_name(name: str) -> str:
    """A name the API passes on: no empty, `.` or `..` segment, no leading `/`, no
    backslash or control character, at most 1024 characters; else 422."""
    segments = name.removeprefix(USER_PREFIX).split("/")
    if len(name) > 1024 or _UNSAFE.search(name) or any(s in ("", ".", "..") for s in segments):
        raise ApiError(422, "invalid_name", "the artifact name is not valid")
    return name


def disposition(name: str) -> str:
    """`attachment` with an ASCII-only filename and the real one percent-encoded."""
    base = name.removeprefix(USER_PREFIX).rsplit("/", 1)[-1][:200]
    plain = _ASCII_NAME.sub("_", base).strip("._")[:150] or "artifact"
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(base, safe='')}"


async def _scope(
    request: Request, caller: Caller, agent_id: str, session_id: str | None
) -> tuple[Runner, SqlArtifactService]:
    """The agent's runner and the artifact service, after checking that the session
    (if any) is the caller's own: another user's session is 404."""
    host = host_of(request)
    runner = host.runner_for(caller.principal, agent_id)
    if session_id is not None:
        session = await host.services.session_service.get_session(
            app_name=runner.app_name, user_id=caller.user_id, session_id=session_id
        )
        if session is None:
            raise ApiError(404, "not_found", "no such session")
    return runner, host.services.artifact_service


async def _names(
    request: Request, caller: Caller, agent_id: str, session_id: str | None
) -> ArtifactList:
    runner, artifacts = await _scope(request, caller, agent_id, session_id)
    names = await artifacts.list_artifact_keys(
        app_name=runner.app_name, user_id=caller.user_id, session_id=session_id
    )
    return ArtifactList(
        artifacts=[
            ArtifactName(name=n, scope="user" if n.startswith(USER_PREFIX) else "session")
            for n in names
        ]
    )


async def _versions(
    request: Request, caller: Caller, agent_id: str, session_id: str | None, name: str
) -> ArtifactVersionList:
    runner, artifacts = await _scope(request, caller, agent_id, session_id)
    versions = await artifacts.list_artifact_versions(
        app_name=runner.app_name,
        user_id=caller.user_id,
        filename=check_name(name),
        session_id=session_id,
    )
    if not versions:
        raise ApiError(404, "not_found", "no such artifact")
    return ArtifactVersionList(
        name=name,
        versions=[
            ArtifactVersionOut(
                version=v.version,
                mime_type=v.mime_type,
                create_time=v.create_time,
                custom_metadata=v.custom_metadata,
            )
            for v in versions
        ],
    )


async def _download(
    request: Request,
    caller: Caller,
    agent_id: str,
    session_id: str | None,
    name: str,
    version: int | None,
) -> StreamingResponse:
    runner, artifacts = await _scope(request, caller, agent_id, session_id)
    try:
        payload = await artifacts.open_payload(
            app_name=runner.app_name,
            user_id=caller.user_id,
            filename=check_name(name),
            session_id=session_id,
            version=version,
        )
    except ArtifactNotStoredError as exc:
        raise ApiError(404, "not_found", "this artifact version has no stored bytes") from exc
    if payload is None:
        raise ApiError(404, "not_found", "no such artifact or version")
    mime = payload.mime_type if _MIME.fullmatch(payload.mime_type.split(";")[0]) else None
    headers = {
        "Content-Length": str(payload.size),
        "Content-Disposition": disposition(name),
        "ETag": f'"{payload.digest}"',
        "X-Artifact-Version": str(payload.version),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "sandbox",
        "Cache-Control": "private, no-store",
    }
    return StreamingResponse(
        iterate_in_threadpool(payload.chunks(_CHUNK)),
        media_type=mime or "application/octet-stream",
        headers=headers,
    )


@router.get(
    "/sessions/{session_id}/artifacts",
    response_model=ArtifactList,
    responses=errors(401, 404, 422),
)
async def session_artifacts(
    agent_id: str, session_id: str, request: Request, caller: Auth
) -> ArtifactList:
    """The session's artifact names and the caller's `user:` ones (ADK's view)."""
    return await _names(request, caller, agent_id, session_id)


@router.get(
    "/sessions/{session_id}/artifact-versions/{name:path}",
    response_model=ArtifactVersionList,
    responses=errors(401, 404, 422),
)
async def session_artifact_versions(
    agent_id: str, session_id: str, name: Name, request: Request, caller: Auth
) -> ArtifactVersionList:
    return await _versions(request, caller, agent_id, session_id, name)


@router.get(
    "/sessions/{session_id}/artifacts/{name:path}",
    response_class=StreamingResponse,
    responses={**DOWNLOAD, **errors(401, 404, 422)},
)
async def download_session_artifact(
    agent_id: str,
    session_id: str,
    name: Name,
    request: Request,
    caller: Auth,
    version: Version = None,
) -> StreamingResponse:
    """The bytes of the latest version, or of `version`."""
    return await _download(request, caller, agent_id, session_id, name, version)


@router.get("/artifacts", response_model=ArtifactList, responses=errors(401, 404))
async def user_artifacts(agent_id: str, request: Request, caller: Auth) -> ArtifactList:
    """The caller's `user:` artifacts of this agent, shared by all their sessions."""
    return await _names(request, caller, agent_id, None)


@router.get(
    "/artifact-versions/{name:path}",
    response_model=ArtifactVersionList,
    responses=errors(401, 404, 422),
)
async def user_artifact_versions(
    agent_id: str, name: Name, request: Request, caller: Auth
) -> ArtifactVersionList:
    """A `user:` artifact's versions (the name with or without its `user:` prefix)."""
    return await _versions(request, caller, agent_id, None, name)


@router.get(
    "/artifacts/{name:path}",
    response_class=StreamingResponse,
    responses={**DOWNLOAD, **errors(401, 404, 422)},
)
async def download_user_artifact(
    agent_id: str, name: Name, request: Request, caller: Auth, version: Version = None
) -> StreamingResponse:
    return await _download(request, caller, agent_id, None, name, version)
