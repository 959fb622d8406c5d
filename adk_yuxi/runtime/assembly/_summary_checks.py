"""What makes a summary unusable, checked before ADK stores it.

ADK's `LlmEventSummarizer` keeps the first response that has content, and the models
here answer a refused request with an error response that carries text: without these
checks a session stored `[MODEL_REJECTED] ... HTTP 400 ...` as its summary and every
later request started with it. `CheckedSummaryLlm` makes the summarizer's model raise
`SummaryFailed` on an error response, an empty one or a refusal; `summary_problem`
checks the summary event itself (for summarizers given ready-made, too) and rejects one
that is not shorter than what it replaces.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Sequence

from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import model_validator
from typing_extensions import override

from ...errors import YuxiError
from ...models import MODEL_CONTEXT_EXCEEDED

__all__ = ["CheckedSummaryLlm", "SummaryFailed", "newer_half", "replaced_size", "summary_problem"]

_REFUSED = {
    types.FinishReason.SAFETY,
    types.FinishReason.RECITATION,
    types.FinishReason.BLOCKLIST,
    types.FinishReason.PROHIBITED_CONTENT,
    types.FinishReason.SPII,
}
# The text of an error response of this project's models: "[CODE] explanation".
_ERROR_TEXT = re.compile(r"^\s*\[(MODEL_[A-Z_]+|REACT_PARSE_FAILED|YUXI_MODEL_UNUSABLE)\]")


class SummaryFailed(YuxiError):
    """The summarizer's model gave no usable summary (the reason is the message);
    `too_long` when its host refused the summary request as longer than its context."""

    def __init__(self, reason: str, *, too_long: bool = False) -> None:
        super().__init__(reason)
        self.too_long = too_long


def _text(content: types.Content | None) -> str:
    parts = content.parts if content is not None and content.parts else []
    return "".join(p.text or "" for p in parts if not p.thought).strip()


def response_problem(response: LlmResponse) -> str | None:
    """Why `response` cannot be a summary, or None."""
    if response.error_code:
        return f"the model answered with an error ({response.error_code}: {response.error_message})"
    if response.finish_reason in _REFUSED:
        return f"the model refused ({response.finish_reason.name.lower()})"
    text = _text(response.content)
    if not text:
        return "the model sent an empty summary"
    if _ERROR_TEXT.match(text):
        return f"the model answered with an error text ({text[:120]!r})"
    return None


class CheckedSummaryLlm(BaseLlm):
    """The summarizer's model: `inner`, whose unusable answers raise `SummaryFailed`."""

    inner: BaseLlm
    model: str = ""

    @model_validator(mode="after")
    def _named(self) -> CheckedSummaryLlm:
        self.model = self.model or self.inner.model
        return self

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        async for response in self.inner.generate_content_async(llm_request, stream):
            if response.partial:
                continue
            problem = response_problem(response)
            if problem is not None:
                too_long = response.error_code == MODEL_CONTEXT_EXCEEDED
                raise SummaryFailed(problem, too_long=too_long)
            yield response


def _size(content: types.Content | None) -> int:
    return 0 if content is None else len(content.model_dump_json(exclude_none=True))


def _request_content(event: Event) -> types.Content | None:
    compaction = event.actions.compaction if event.actions else None
    if compaction is not None and compaction.compacted_content is not None:
        return compaction.compacted_content
    return event.content


def replaced_size(events: Sequence[Event]) -> int:
    """The characters `events` take in a request (a summary in place of what it covers)."""
    return sum(_size(_request_content(e)) for e in events)


def summary_problem(summary: Event, replaced: Sequence[Event]) -> str | None:
    """Why `summary` must not be stored in place of `replaced`, or None."""
    compaction = summary.actions.compaction if summary.actions else None
    content = compaction.compacted_content if compaction is not None else None
    text = _text(content)
    if not text:
        return "the summary is empty"
    if _ERROR_TEXT.match(text):
        return f"the summary is an error text ({text[:120]!r})"
    before = replaced_size(replaced)
    after = _size(content)
    if after >= before:
        return (
            f"the summary ({after:,} characters) is not shorter than what it replaces"
            f" ({before:,} characters)"
        )
    return None


def newer_half(events: Sequence[Event]) -> list[Event]:
    """The events to summarize when all of them do not fit the summarizer's context: the
    previous summary (it carries everything before it) and the newer half of the rest.
    The older half is left out of the summary (it stays in the store)."""
    first = list(events[:1])
    rolled = bool(first) and first[0].actions.compaction is not None
    rest = list(events[1:] if rolled else events)
    return [*first[:1], *rest[len(rest) // 2 :]] if rolled else rest[len(rest) // 2 :]
