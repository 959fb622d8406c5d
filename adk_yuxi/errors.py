"""The one root of every error adk_yuxi raises on purpose, and the one shape of every
error a model or a host is shown.

Each package keeps its own error types (and the ADK or builtin bases callers of the ADK
interfaces already catch); all of them also derive from ``YuxiError`` so a host can
catch everything of ours in one place.

Two kinds of failure never travel as Python exceptions through ADK's Runner, because a
plugin exception would end the run as an opaque ``RuntimeError``:

- a refused or failed *tool call* goes back to the model as a tool result built by
  `tool_error` (a `ToolErrorCode`, the tool, advice, never the reason), so it can
  correct itself and the run goes on;
- a *run that must stop* ends with an error event whose ``error_code`` is the ``CODE``
  of a `RunStopped` subclass, and whose text is one public sentence per code (the
  details go to the operator log). `stop_response` builds that event's response and
  ``SomeStop.from_event(event)`` turns it back into the exception for hosts that
  prefer one: both sides of the one event live here.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Self

if TYPE_CHECKING:
    from google.adk.models.llm_response import LlmResponse

__all__ = [
    "MissingExtraError",
    "RunStopped",
    "ToolErrorCode",
    "YuxiError",
    "stop_response",
    "tool_error",
]


class YuxiError(Exception):
    """Base class of every error adk_yuxi raises on purpose."""


class MissingExtraError(YuxiError, ImportError):
    """A part of adk_yuxi used without the optional packages it needs; the message is
    the one line that installs them (`pip install 'adk-yuxi[EXTRA]'`)."""

    def __init__(self, extra: str, package: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the {package!r} package, which is not installed:"
            f" pip install 'adk-yuxi[{extra}]'"
        )
        self.extra = extra
        self.package = package


class ToolErrorCode(StrEnum):
    """Why a tool call did not give a result; the ``code`` of a `tool_error`."""

    INVALID_ARGUMENTS = "invalid_arguments"
    TOOL_NOT_AVAILABLE = "tool_not_available"
    RESOURCE_NOT_AVAILABLE = "resource_not_available"
    LIMIT_REACHED = "limit_reached"
    TOOL_FAILED = "tool_failed"
    CONFLICT = "conflict"
    RUN_ENDING = "run_ending"
    MALFORMED_ARGUMENTS = "malformed_arguments"
    INVALID_FINAL_ANSWER = "invalid_final_answer"
    HANDOFF_NOT_ALLOWED = "handoff_not_allowed"
    AGENT_STOPPED = "agent_stopped"


_ADVICE: dict[ToolErrorCode, str] = {
    ToolErrorCode.INVALID_ARGUMENTS: (
        "The arguments do not match the tool's parameters, so it did not run. Send JSON"
        " values of the declared types (no strings for booleans, numbers, objects or"
        " lists; no undeclared fields) and call it again."
    ),
    ToolErrorCode.TOOL_NOT_AVAILABLE: (
        "This tool is not available here right now, so it did not run. Use only the"
        " tools you are shown; if a skill provides what you need, load it first."
    ),
    ToolErrorCode.RESOURCE_NOT_AVAILABLE: (
        "This call names a resource that is not available to this user, so it did"
        " not run. Do not retry with guessed identifiers; ask the user instead."
    ),
    ToolErrorCode.LIMIT_REACHED: (
        "The tool call limit for this turn is reached, so it did not run; the run is ending."
    ),
    ToolErrorCode.TOOL_FAILED: (
        "The tool failed while running, so there is no result. You may try once more"
        " with different arguments or answer without it."
    ),
    ToolErrorCode.CONFLICT: (
        "This was already recorded or settled differently, so nothing changed. Do not"
        " repeat the call; carry on with what is recorded."
    ),
    ToolErrorCode.RUN_ENDING: "This run is ending, so the tool did not run.",
    ToolErrorCode.MALFORMED_ARGUMENTS: (
        "The arguments of this call were not one JSON object, so nothing ran. Call it"
        " again with a JSON object of named arguments, as `expected` describes."
    ),
    ToolErrorCode.INVALID_FINAL_ANSWER: (
        "The final answer does not match the required output schema. Call"
        " `set_model_response` again with every required field of the right type."
    ),
    ToolErrorCode.HANDOFF_NOT_ALLOWED: (
        "No transfer happened: this agent may not hand the conversation to that agent."
        " Transfer only to one of the agents listed in `allowed`, or answer yourself."
    ),
    ToolErrorCode.AGENT_STOPPED: (
        "This agent was stopped before it finished, so it gave no answer. Do not call it"
        " again in this turn; answer with what you have."
    ),
}


def tool_error(
    code: ToolErrorCode | str, tool: str, *, message: str | None = None, **fields: Any
) -> dict[str, Any]:
    """The tool result a refused or failed call gives the model: the code, the tool and
    advice, plus `fields` the model may see (an argument name, validation problems).
    `message` replaces the code's advice where that would be untrue of this call (the
    run is ending, but the tool did run). Never a reason, a stack or a path: those go to
    the operator log."""
    code = ToolErrorCode(code)
    advice = _ADVICE[code] if message is None else message
    return {"error": {"code": code.value, "tool": tool, "message": advice, **fields}}


class RunStopped(YuxiError):
    """A run that ended with an error event instead of an answer.

    Subclasses set ``CODE`` (the event's ``error_code``) and ``PUBLIC_TEXT`` (the one
    text every such event carries, so the event never tells an outsider more).
    """

    CODE: ClassVar[str] = "RUN_STOPPED"
    PUBLIC_TEXT: ClassVar[str] = "the run was stopped"

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason or self.PUBLIC_TEXT
        super().__init__(f"{self.CODE.lower().replace('_', ' ')}: {self.reason}")

    @classmethod
    def from_event(cls, event: object) -> Self | None:
        """The exception an ADK event stands for, or None if it is not this stop."""
        if getattr(event, "error_code", None) != cls.CODE:
            return None
        return cls(str(getattr(event, "error_message", None) or cls.PUBLIC_TEXT))


def stop_response(stop: type[RunStopped], text: str | None = None) -> LlmResponse:
    """An error response in place of the model's, with the stop's public text only (or
    `text`, a public text of that stop that says more). It ends the run through ADK's own
    path: it carries no function call, so the flow treats it as the final event."""
    # Imported here: every module imports this one, most without needing ADK's models.
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    text = text or stop.PUBLIC_TEXT
    return LlmResponse(
        content=types.Content(
            role="model", parts=[types.Part(text=f"This run was stopped: {text}.")]
        ),
        error_code=stop.CODE,
        error_message=text,
        turn_complete=True,
    )
