"""`ask_user_question`: a base tool that pauses the run at a durable waiting point.

It uses ADK's own pause: the tool yields a `RequestInput` whose interrupt id is the
waiting point's id, ADK emits an ``adk_request_input`` call and the run ends paused. A
resume is a `FunctionResponse` to that id, from a host (after `WaitpointStore.answer`),
from `adk run`'s prompt or from `adk web`; ADK then re-runs the tool with the response
in `resume_inputs`. The store, not the response, decides: a direct response is
validated and recorded as the answer (an invalid one asks again, the point stays
pending), and a point already answered or cancelled is reported as it stands.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from google.adk.events.request_input import RequestInput
from google.adk.tools.tool_context import ToolContext

from ...errors import ToolErrorCode, tool_error
from ...ledger import ledger_plugin_of
from ...waitpoints import (
    AnswerRejected,
    Question,
    QuestionList,
    StoredQuestionsInvalid,
    Waitpoint,
    WaitpointConflict,
)
from .._metadata import ToolExtraMetadata

__all__ = ["METADATA", "ask_user_question", "render_questions"]

logger = logging.getLogger("adk_yuxi.tools.ask")


def render_questions(questions: Sequence[Question]) -> str:
    """The questions as a person reads them at a prompt, with how to answer."""
    lines = []
    for q in questions:
        lines.append(f"[{q.question_id}] {q.question}")
        for o in q.options:
            extra = f" - {o.description}" if o.description else ""
            lines.append(f"    {o.value}: {o.label}{extra}")
        if q.options:
            kind = "a list of values" if q.multi_select else "one value"
            other = ', or {"other": "text"}' if q.allow_other else ""
            lines.append(f"    answer with {kind}{other}")
        else:
            lines.append("    answer with text")
    if len(questions) == 1:
        lines.append("Reply with the answer alone, or as JSON.")
    else:
        ids = ", ".join(f'"{q.question_id}": …' for q in questions)
        lines.append(f"Reply with JSON: {{{ids}}}")
    return "\n".join(lines)


def _typed(question: Question, value: Any) -> Any:
    """A value typed at a prompt, in the answer's own form: JSON text is parsed, a
    multiple choice may be typed as comma-separated values, and a number or boolean
    that ADK parsed out of the typed line is text again (``42`` answers "42")."""
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith(("[", "{")):
        with contextlib.suppress(ValueError):
            return json.loads(text)
    if question.options and question.multi_select:
        return [v.strip() for v in text.split(",") if v.strip()]
    return value


def _answers_from(response: Any, questions: Sequence[Question]) -> Any:
    """The answers inside a response sent straight to the paused call by `adk run`'s
    prompt or `adk web`'s form: an object keyed by question id, or, for a single
    question, the bare value (`adk run` sends a line that is not a JSON object as
    ``{"result": line}``, which ADK unwraps)."""
    if isinstance(response, Mapping) and set(response) == {"answers"}:
        response = response["answers"]
    if isinstance(response, Mapping) and set(response) == {"result"}:
        response = response["result"]
    if len(questions) == 1:
        response = _typed(questions[0], response)
        if not (isinstance(response, Mapping) and questions[0].question_id in response):
            response = {questions[0].question_id: response}
    if not isinstance(response, Mapping):
        return response
    by_id = {q.question_id: q for q in questions}
    return {k: _typed(by_id[k], v) if k in by_id else v for k, v in response.items()}


def _result(point: Waitpoint, questions: Sequence[Question]) -> dict[str, Any]:
    shown = [q.model_dump(mode="json") for q in questions]
    if point.status == "cancelled":
        return {
            "questions": shown,
            "cancelled": True,
            "message": "The user dismissed these questions without answering.",
        }
    return {"questions": shown, "answers": point.answers}


def _ask(point: Waitpoint, questions: Sequence[Question], problem: str = "") -> RequestInput:
    message = render_questions(questions)
    if problem:
        message = f"That answer was not accepted ({problem}).\n{message}"
    payload = {
        "waitpoint_id": point.id,
        "questions": [q.model_dump(mode="json") for q in questions],
    }
    # No response_schema: ADK would validate a resume against it and keep only its
    # fields (a host's {"answers": …} would lose its content, a mismatch would fail the
    # run). The store validates instead, and an invalid answer asks again.
    return RequestInput(
        interrupt_id=point.id, message=message, payload=payload, response_schema=None
    )


METADATA = ToolExtraMetadata(
    category="base",
    tags=["interaction"],
    display_name="Ask the user",
    extra={"base_tool": True},
)
"""How the tool is catalogued where it is registered (`register_base_tools`)."""


async def ask_user_question(
    questions: QuestionList, tool_context: ToolContext
) -> AsyncGenerator[Any, None]:
    """Asks the user one to five questions and waits for the answers before going on.

    Use it when you cannot continue well without the user's decision or information.
    Each question has `question` (the text) and optionally `question_id`, `options`
    (up to 5 objects with `label`, `value` and an optional `description`; leave them
    out for a free-text answer), `multi_select` (true lets the user pick several values)
    and `allow_other` (false forbids an answer outside the options). The result holds
    the questions and the user's `answers` keyed by question id, or `cancelled: true`.
    """
    plugin = ledger_plugin_of(tool_context)
    if plugin is None:
        yield tool_error(ToolErrorCode.TOOL_NOT_AVAILABLE, "ask_user_question")
        return
    call_id = tool_context.run_id
    invocation_id = tool_context.invocation_id
    if not call_id or not invocation_id:
        yield tool_error(ToolErrorCode.TOOL_FAILED, "ask_user_question")
        return
    session = tool_context.session
    try:
        point = await plugin.waitpoints.open(
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.id,
            invocation_id=invocation_id,
            call_id=call_id,
            questions=questions,
        )
    except Exception:  # storage down: no waiting point, the model can ask in its reply
        logger.exception("opening the waiting point of call %s failed", call_id)
        yield tool_error(ToolErrorCode.TOOL_FAILED, "ask_user_question")
        return
    try:
        stored = point.question_set()
    except StoredQuestionsInvalid as invalid:
        yield tool_error(ToolErrorCode.TOOL_FAILED, "ask_user_question", detail=invalid.reason)
        return
    response = tool_context.resume_inputs.get(point.id)
    if point.status != "pending":
        if response is None or response == point.resume_payload():
            yield _result(point, stored)
        else:
            yield tool_error(ToolErrorCode.CONFLICT, "ask_user_question", status=point.status)
        return
    if response is None:
        yield _ask(point, stored)
        return
    try:
        point = await plugin.waitpoints.answer(
            point.id, _answers_from(response, stored), user_id=session.user_id
        )
    except AnswerRejected as rejected:
        yield _ask(point, stored, "; ".join(p["problem"] for p in rejected.problems))
        return
    except WaitpointConflict as conflict:
        yield tool_error(ToolErrorCode.CONFLICT, "ask_user_question", status=conflict.status)
        return
    yield _result(point, stored)
