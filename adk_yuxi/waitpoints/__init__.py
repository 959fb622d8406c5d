"""Durable waiting points: what `ask_user_question` stores while a run waits for a user.

A host lists the pending points of a user or a session (`WaitpointStore.list_pending`),
answers one (`answer`: validated against the stored questions; a second answer is a
`WaitpointConflict`, HTTP 409) or cancels it (`cancel`), then resumes the paused run by
sending `Waitpoint.resume_message()` to `Runner.run_async` for the point's session.
"""

from ._errors import (
    AnswerRejected,
    StoredQuestionsInvalid,
    WaitpointConflict,
    WaitpointError,
    WaitpointNotFound,
)
from ._questions import (
    QUESTIONS_SCHEMA,
    Option,
    Question,
    QuestionList,
    normalise_questions,
    validate_answers,
)
from ._store import REQUEST_INPUT, Waitpoint, WaitpointPage, WaitpointStore, waitpoint_id

__all__ = [
    "QUESTIONS_SCHEMA",
    "REQUEST_INPUT",
    "AnswerRejected",
    "Option",
    "Question",
    "QuestionList",
    "StoredQuestionsInvalid",
    "Waitpoint",
    "WaitpointConflict",
    "WaitpointError",
    "WaitpointNotFound",
    "WaitpointPage",
    "WaitpointStore",
    "normalise_questions",
    "validate_answers",
    "waitpoint_id",
]
