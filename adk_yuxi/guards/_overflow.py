"""A request the model's host refuses as too long: compact the session, retry once.

Once a conversation outgrew the model's context every later turn failed at once
(`context_length_exceeded`), forever: the compaction that would have shrunk it runs after
a turn, and only past a threshold the refused turns never reported. Here the model call
that is refused (`MODEL_CONTEXT_EXCEEDED`, from the OpenAI-compatible model) makes the
app's compaction run now, the request is rebuilt from the compacted session and the call
is made once more. If nothing could be compacted, or the retry is refused too, the turn
ends with the refusal, which names the context size; it reports the prompt as at least
that size, so the compaction after the turn still runs.

The retry keeps what plugins, callbacks and ADK's processors put into the refused request
beyond the session's contents (`carried_over`), and the summarizer knows the compaction
is forced (`compaction_forced`): it does not defer it for an earlier failed summary.

The retried answer replaces the refused one in place (not returned), so the plugins after
this one see it as the model's answer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types
from typing_extensions import override

from .._adk import compact_session_now, invocation_of, rebuild_request_contents
from ..models import MODEL_CONTEXT_EXCEEDED
from ._budget import remember
from ._kept_contents import carried_over

__all__ = ["OVERFLOW_PLUGIN_NAME", "ContextOverflowPlugin", "compaction_forced"]

OVERFLOW_PLUGIN_NAME = "yuxi_context_overflow"

logger = logging.getLogger("adk_yuxi.guards.overflow")

_FORCED: ContextVar[bool] = ContextVar("yuxi_compaction_forced", default=False)


def compaction_forced() -> bool:
    """Whether the compaction running now was forced by a refused request (not by the
    prompt size crossing the threshold after a turn)."""
    return _FORCED.get()


@contextmanager
def _forcing() -> Iterator[None]:
    token = _FORCED.set(True)
    try:
        yield
    finally:
        _FORCED.reset(token)


async def _session_contents(ctx: InvocationContext) -> list[types.Content]:
    """The contents ADK builds from the session now, and nothing else."""
    scratch = LlmRequest()
    await rebuild_request_contents(ctx, scratch)
    return list(scratch.contents)


class ContextOverflowPlugin(BasePlugin):
    """Compacts and retries once a model call refused for the length of its request."""

    def __init__(self, name: str = OVERFLOW_PLUGIN_NAME) -> None:
        super().__init__(name=name)
        self._requests: dict[str, LlmRequest] = {}

    @override
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        # The request object itself: later plugins' changes to it are kept for a retry.
        remember(self._requests, callback_context.invocation_id, llm_request)
        return None

    @override
    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        if llm_response.error_code != MODEL_CONTEXT_EXCEEDED:
            return None
        request = self._requests.get(callback_context.invocation_id)
        ctx = invocation_of(callback_context)
        agent = ctx.agent
        if request is None or not isinstance(agent, LlmAgent):
            return None
        retried = await self._retry(ctx, agent, request)
        if retried is None:
            return None
        for field in type(llm_response).model_fields:
            setattr(llm_response, field, getattr(retried, field))
        return None

    async def _retry(
        self, ctx: InvocationContext, agent: LlmAgent, request: LlmRequest
    ) -> LlmResponse | None:
        session_before = await _session_contents(ctx)
        with _forcing():
            compacted = await compact_session_now(ctx)
        if not compacted:
            logger.warning("context overflow: nothing could be compacted; the turn ends")
            return None
        before = len(request.contents)
        session_after = await _session_contents(ctx)
        request.contents = carried_over(request.contents, session_before, session_after)
        logger.info(
            "context overflow: compacted, retrying with %d contents instead of %d",
            len(request.contents),
            before,
        )
        final: LlmResponse | None = None
        async for response in agent.canonical_model.generate_content_async(request):
            if not response.partial:
                final = response
        return final

    @override
    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._requests.pop(invocation_context.invocation_id, None)
