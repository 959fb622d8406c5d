"""A history over the compaction threshold is compacted after the answer, not before it.

When a turn starts with the history above the token threshold and no summary covering
it (a history imported or grown while compaction was off or failing, a lower budget, a
smaller model), ADK compacts before the turn's first model call: the user waits for a
summary of the whole history (seconds at 10,000 events) before the answer starts.

`DeferredCompactionPlugin` checks at the start of each run, from the latest model event
since the latest summary (the prompt size it reported, or the mark below), so the check
reads a few events. When the history is over the threshold, the run is given only the
newest events that fit in half the threshold, from a turn's first message on: ADK's
pre-call check then sees no need to compact and the model answers from that tail (the
older turns are left out of this turn's request; nothing is deleted). A run that needs
an event it would leave out (a call not yet answered, the run's own earlier events when
it resumes) is left whole, and ADK compacts before its model call as it does alone.
After the run a
background task reads the whole session again and summarizes it with the App's own
summarizer and ADK's token-threshold compaction, `GuardedSummarizer` included: a failed
or discarded summary is not stored. The session's next run stores it, before its
message, through its own Session object (`_summary_handoff`): appended by the task, it
could land between that run's read and its first append and fail the run as stale.
Within a process a session has at most one such compaction in flight. Later turns read
the summary and what follows it.

A history can also be long in events and short in tokens (many small turns, tool calls
with small results): ADK still builds the model's contents from every event since the
latest summary on every model call, so each call costs CPU in proportion to them. With
`compact_at_events` (the context policy's), a run that ends with that many events after
the latest summary compacts its session the same way, at the end of the run, after its
answer streamed (as ADK's own post-run compaction does): the summary covers a bounded
range, so it is one short summarizer call, and the next run of the session, started
after this one ended, cannot be overtaken by it. Such a run is never given a tail: what
it sends fits the token budget, so it answers from its whole history and only the turns
after the summary are lighter.

The model responses of a run given a tail are marked in `custom_metadata`
(`yuxi_history_over_budget: true`): the prompt size they report is the tail's, so the
next turn still knows the history is over the threshold until a summary lands.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.apps.app import EventsCompactionConfig
from google.adk.events.event import Event
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types
from typing_extensions import override

from ..._adk import StaleSessionError, compact_session_now
from ._prompt_estimate import CHARS_PER_TOKEN, PromptEstimatePlugin, content_chars
from ._summary_handoff import KeptSummaries, SummaryCapture

__all__ = [
    "OVER_BUDGET_KEY",
    "DeferredCompactionPlugin",
    "compaction_plugins",
    "events_since_summary",
    "newest_fitting",
    "over_threshold",
]

logger = logging.getLogger("adk_yuxi.runtime.compaction")

OVER_BUDGET_KEY = "yuxi_history_over_budget"
"""The `custom_metadata` key marking a response whose run was given only a tail."""


def _is_summary(event: Event) -> bool:
    return bool(event.actions and event.actions.compaction)


def _chars(event: Event) -> int:
    compaction = event.actions.compaction if event.actions else None
    if compaction is not None and compaction.compacted_content is not None:
        return content_chars(compaction.compacted_content)
    return content_chars(event.content) if event.content is not None else 0


def over_threshold(events: list[Event], threshold: int) -> bool:
    """Whether the history from the latest summary on is over `threshold` tokens: the
    latest reported prompt size says so (or carries the over-budget mark); with none
    reported since the latest summary, its events are counted."""
    counted = 0
    for event in reversed(events):
        if _is_summary(event):
            break
        usage = event.usage_metadata
        if event.author != "user" and usage is not None and usage.prompt_token_count is not None:
            if (event.custom_metadata or {}).get(OVER_BUDGET_KEY):
                return True
            return usage.prompt_token_count >= threshold
        counted += 1
    start = len(events) - counted
    chars = sum(_chars(event) for event in events[max(start - 1, 0) :])
    return chars // CHARS_PER_TOKEN >= threshold


def events_since_summary(events: list[Event]) -> int:
    """How many events follow the latest summary (all of them without one)."""
    for index in range(len(events) - 1, -1, -1):
        if _is_summary(events[index]):
            return len(events) - 1 - index
    return len(events)


def _turn_start(event: Event) -> bool:
    """A user's message: where a tail may start (never between a call and its result)."""
    if event.author != "user" or event.branch or event.isolation_scope:
        return False
    parts = event.content.parts if event.content and event.content.parts else []
    return any(p.text for p in parts) and not any(p.function_response for p in parts)


def _still_needed(older: list[Event], invocation_id: str) -> bool:
    """Whether events left out would be looked for by this run: a call not answered
    among them (a paused or long-running call this run may answer), or an event of the
    run's own invocation (a resumed one)."""
    calls: set[str] = set()
    for event in older:
        if event.invocation_id == invocation_id:
            return True
        calls |= {call.id or "" for call in event.get_function_calls()}
        calls -= {response.id or "" for response in event.get_function_responses()}
    return bool(calls)


def newest_fitting(events: list[Event], budget_tokens: int) -> int | None:
    """Where the newest events that fit in `budget_tokens` start, at a turn's first
    message; None if that is the first event or no turn fits."""
    budget, total, start = budget_tokens * CHARS_PER_TOKEN, 0, None
    for index in range(len(events) - 1, -1, -1):
        total += _chars(events[index])
        if total > budget:
            break
        if _turn_start(events[index]):
            start = index
        if _is_summary(events[index]):
            break
    return start or None


class DeferredCompactionPlugin(BasePlugin):
    """Gives a run over the threshold the newest events that fit and compacts its
    session in the background after the run (see the module docstring)."""

    def __init__(self, compact_at_events: int | None = None) -> None:
        super().__init__(name="yuxi_deferred_compaction")
        self.compact_at_events = compact_at_events
        self._tailed: set[str] = set()  # invocation ids given a tail
        self._compacting: dict[tuple[str, str, str], asyncio.Task[None]] = {}
        self._summaries = KeptSummaries()

    @override
    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        session = invocation_context.session
        key = (session.app_name, session.user_id, session.id)
        await self._summaries.store_into(key, session, invocation_context.session_service)
        return None

    @staticmethod
    def _config(ctx: InvocationContext) -> EventsCompactionConfig | None:
        config = ctx.events_compaction_config
        if config is None or config.token_threshold is None:
            return None
        return None if config.event_retention_size is None else config

    @override
    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        config = self._config(invocation_context)
        events = invocation_context.session.events
        if config is None or config.token_threshold is None:
            return None
        if not over_threshold(events, config.token_threshold):
            return None
        start = newest_fitting(events, config.token_threshold // 2)
        if start is None or _still_needed(events[:start], invocation_context.invocation_id):
            return None  # ADK compacts before the model call, as it does alone
        logger.info(
            "History over the compaction threshold: this run gets its newest %d of %d"
            " events; the session is compacted after the run",
            len(events) - start,
            len(events),
        )
        del events[:start]
        self._tailed.add(invocation_context.invocation_id)
        return None

    @override
    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        if callback_context.invocation_id in self._tailed and not llm_response.partial:
            metadata = llm_response.custom_metadata or {}
            llm_response.custom_metadata = {**metadata, OVER_BUDGET_KEY: True}
        return None

    def _too_many_events(self, events: list[Event]) -> bool:
        limit = self.compact_at_events
        return limit is not None and events_since_summary(events) >= limit

    @override
    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        tailed = invocation_context.invocation_id in self._tailed
        self._tailed.discard(invocation_context.invocation_id)
        session = invocation_context.session
        if self._config(invocation_context) is None:
            return
        key = (session.app_name, session.user_id, session.id)
        if key in self._compacting:
            return
        if not tailed:
            if self._too_many_events(session.events):
                await self._compact_copy(invocation_context)  # answered already
            return
        task = asyncio.create_task(self._summarize_for_next_run(invocation_context))
        self._compacting[key] = task
        task.add_done_callback(lambda _: self._compacting.pop(key, None))

    @override
    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        self._tailed.discard(invocation_context.invocation_id)

    async def _compact_copy(self, ctx: InvocationContext) -> None:
        """Compacts a copy of the run's own session at the run's end (whole, or windowed
        from the latest summary, which is all ADK's compaction reads; a copy, so that
        ADK's own check after the run still reads the run's reported prompt size rather
        than estimating one behind the new summary)."""
        own = ctx.session
        copy = own.model_copy(update={"events": list(own.events)})
        await self._guarded(compact_session_now(ctx, session=copy))

    async def _summarize_for_next_run(self, ctx: InvocationContext) -> None:
        """Summarizes the session read again now (a tailed run's session lost its older
        events) and keeps the summary for the session's next run to store."""
        config = self._config(ctx)
        assert config is not None and config.token_threshold is not None
        threshold = config.token_threshold
        key = (ctx.session.app_name, ctx.session.user_id, ctx.session.id)

        async def summarize() -> None:
            session = await ctx.session_service.get_session(
                app_name=key[0], user_id=key[1], session_id=key[2]
            )
            if session is None or not (
                over_threshold(session.events, threshold) or self._too_many_events(session.events)
            ):
                return  # gone, or a summary landed meanwhile
            capture = SummaryCapture(ctx.session_service)
            if await compact_session_now(ctx, session=session, service=capture):
                for event in capture.events:
                    self._summaries.keep(key, ctx.session_service, event)

        await self._guarded(summarize())

    @staticmethod
    async def _guarded(compaction: Awaitable[object]) -> None:
        """A stale or failed summary is dropped (logged); the run is not affected."""
        try:
            await compaction
        except StaleSessionError:
            logger.info("Compaction dropped: the session moved on while it ran")
        except Exception:
            logger.warning("Compaction failed; the next turn tries again", exc_info=True)

    async def settle(self) -> None:
        """Waits for the compactions in flight and stores the summaries no run took
        (tests, a host's shutdown)."""
        while self._compacting:
            await asyncio.gather(*self._compacting.values(), return_exceptions=True)
        await self._summaries.store_all()

    @override
    async def close(self) -> None:
        await self.settle()


def compaction_plugins(
    config: EventsCompactionConfig | None, compact_at_events: int | None = None
) -> list[BasePlugin]:
    """`PromptEstimatePlugin` and `DeferredCompactionPlugin` (compacting at
    `compact_at_events` too) when `config` compacts by token threshold (nothing reads
    the size otherwise). Early in an App's plugins: a plugin before them that answers a
    model call ends ADK's chain (the authorization plugin does so only to stop a run)."""
    if config is None or config.token_threshold is None:
        return []
    return [PromptEstimatePlugin(), DeferredCompactionPlugin(compact_at_events)]
