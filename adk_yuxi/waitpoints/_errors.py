"""Errors of the waiting points; a host maps them to HTTP statuses by type."""

from __future__ import annotations

from typing import Any

from adk_yuxi.errors import YuxiError

__all__ = [
    "AnswerRejected",
    "StoredQuestionsInvalid",
    "WaitpointConflict",
    "WaitpointError",
    "WaitpointNotFound",
]


class WaitpointError(YuxiError):
    """Base class of the waiting point errors."""


class WaitpointNotFound(WaitpointError, LookupError):
    """No waiting point with this id belongs to this user (a host answers 404)."""

    def __init__(self, waitpoint_id: str) -> None:
        super().__init__(f"no waiting point {waitpoint_id!r} for this user")
        self.waitpoint_id = waitpoint_id


class WaitpointConflict(WaitpointError):
    """The waiting point is no longer pending (a host answers 409); nothing changed."""

    def __init__(self, waitpoint_id: str, status: str) -> None:
        super().__init__(f"waiting point {waitpoint_id!r} is {status}, not pending")
        self.waitpoint_id = waitpoint_id
        self.status = status


class AnswerRejected(WaitpointError, ValueError):
    """The answers do not fit the stored questions (a host answers 422); the waiting
    point stays pending."""

    def __init__(self, problems: list[dict[str, str]]) -> None:
        listed = "; ".join(f"{p['question_id'] or '(answers)'}: {p['problem']}" for p in problems)
        super().__init__(f"answers rejected: {listed}")
        self.problems = problems

    def to_dict(self) -> dict[str, Any]:
        return {"code": "answer_rejected", "message": str(self), "problems": self.problems}


class StoredQuestionsInvalid(WaitpointError):
    """The stored question set does not validate under the current schema, so it is
    not answered by guessing what it meant."""

    def __init__(self, waitpoint_id: str, reason: str) -> None:
        super().__init__(f"waiting point {waitpoint_id!r} cannot be resumed: {reason}")
        self.waitpoint_id = waitpoint_id
        self.reason = reason
