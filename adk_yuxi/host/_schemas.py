"""The JSON bodies the API answers with, as pydantic models.

Routes declare them as `response_model`, so every JSON answer is serialised through
the model the OpenAPI document shows: the document cannot drift from what is sent.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "AgentList",
    "AgentOut",
    "ApiKeyOut",
    "ArtifactList",
    "ArtifactName",
    "ArtifactVersionList",
    "ArtifactVersionOut",
    "ErrorBody",
    "ErrorDetail",
    "Health",
    "KeyIssued",
    "KeyList",
    "KeyRevoked",
    "MarkOut",
    "MarkPage",
    "SessionDetail",
    "SessionOut",
    "SessionPage",
    "WaitpointOut",
    "WaitpointPage",
]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorDetail(_Out):
    code: str
    message: str
    problems: list[dict[str, Any]] | None = None


class ErrorBody(_Out):
    """Every error answer: a stable `code`, a message safe to show, and for 422 the
    problems (locations and messages; the input is never echoed)."""

    error: ErrorDetail


class Health(_Out):
    status: str


class AgentOut(_Out):
    id: str
    description: str


class AgentList(_Out):
    agents: list[AgentOut]


class ApiKeyOut(_Out):
    id: str
    user_id: str
    label: str
    created_by: str
    created_at: float
    expires_at: float | None
    revoked_at: float | None


class KeyIssued(_Out):
    key: ApiKeyOut
    token: str


class KeyList(_Out):
    keys: list[ApiKeyOut]


class KeyRevoked(_Out):
    key: ApiKeyOut


class SessionOut(_Out):
    id: str
    agent_id: str
    last_update_time: float


class SessionDetail(SessionOut):
    event_count: int


class SessionPage(_Out):
    sessions: list[SessionOut]
    next_page_token: str | None


class WaitpointOut(_Out):
    id: str
    agent_id: str
    session_id: str
    invocation_id: str
    call_id: str
    questions: Any
    status: str
    answers: dict[str, Any] | None
    created_at: float
    updated_at: float


class WaitpointPage(_Out):
    waitpoints: list[WaitpointOut]
    next_page_token: str | None


class ArtifactName(_Out):
    """`scope` user: a `user:` artifact, shared by every session of the user."""

    name: str
    scope: Literal["session", "user"]


class ArtifactList(_Out):
    artifacts: list[ArtifactName]


class ArtifactVersionOut(_Out):
    version: int
    mime_type: str | None
    create_time: float
    custom_metadata: dict[str, Any]


class ArtifactVersionList(_Out):
    name: str
    versions: list[ArtifactVersionOut]


class MarkOut(_Out):
    id: str
    agent_id: str
    agent_name: str
    user_id: str
    session_id: str
    run_id: str
    invocation_id: str
    call_id: str
    reason: str
    created_at: float


class MarkPage(_Out):
    marks: list[MarkOut]
    next_page_token: str | None


class RunOut(_Out):
    id: str
    session_id: str
    agent_id: str
    invocation_id: str
    status: Literal["running", "waiting", "completed", "failed", "cancelled"]
    error_code: str | None
    cancel_requested_at: float | None
    started_at: float
    updated_at: float
    ended_at: float | None


class RunPage(_Out):
    runs: list[RunOut]
    next_page_token: str | None
