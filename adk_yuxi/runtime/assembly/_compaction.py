"""ADK's event compaction, wired from a `ContextPolicy`.

The summarizer is the agent's own model (ADK's `LlmEventSummarizer`), the policy's
`summarizer_model`, or the demo's `DemoSummarizer` when that model is the offline demo
model. It is wrapped so that a summary that fails or takes too long is logged with the
reason and given up: the history stays uncompacted and the turn is not failed. A failed
summary is one whose model answered with an error response (ADK's summarizer would take
its text as the summary), with nothing, or with a refusal; a summary no shorter than
what it replaces is given up too (it would grow every later request), and the same
history is not summarized again until it has grown (`SummaryBackoff`). Only a
cancellation of the turn itself cancels a summary: a summarizer that raises
`CancelledError` on its own is a failed summary. A summary request the model's host
refuses as too long (the history outgrew the model) is made again over the previous
summary and the newer half of the rest, up to `_HALVINGS` times, and the summary still
covers the whole range: the oldest turns are dropped from the prompt rather than the
session staying too long for every request.

The token threshold follows the agent's model: when the model knows its context window
(`YUXI_MODEL_CONTEXT`, or what its server reports), the budget is what fits in it.

ADK runs the compaction in `Runner.run_async` after the turn's last event was yielded, so
the answer has streamed when it starts. One exception is ADK's: a turn whose own model
calls cross the threshold (a long tool loop) is compacted before its next model call, so
that call stays within the budget. A turn that *starts* over the threshold is given the
newest events that fit and compacted after the run instead (`_deferred_compaction`).
"""

from __future__ import annotations

import asyncio
import logging
import warnings

from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from typing_extensions import override

from ...models import DemoLlm, DemoSummarizer, OpenAICompatibleLlm, ReactLlm, UnusableModel
from ..config._context_policy import ContextPolicy
from ._summary_backoff import SummaryBackoff
from ._summary_checks import CheckedSummaryLlm, SummaryFailed, newer_half, summary_problem

__all__ = ["GuardedSummarizer", "compaction_config", "fitted_threshold"]

logger = logging.getLogger("adk_yuxi.runtime.compaction")

Summarizer = BaseLlm | BaseEventsSummarizer
_HALVINGS = 3


class GuardedSummarizer(BaseEventsSummarizer):
    """A summarizer whose failure or timeout is logged and returns no summary."""

    def __init__(self, inner: BaseEventsSummarizer, timeout_seconds: float) -> None:
        self.inner = inner
        self.timeout_seconds = timeout_seconds
        self.backoff = SummaryBackoff()

    @override
    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        if (deferred := self.backoff.deferred(events)) is not None:
            logger.info("Compaction deferred: %s", deferred)
            return None
        try:
            summary = await asyncio.wait_for(self._fitting(events), self.timeout_seconds)
            if summary is None:
                return None
            reason = summary_problem(summary, events)
            if reason is None:
                self.backoff.succeeded(events)
                return summary
        except TimeoutError:
            reason = f"no summary within {self.timeout_seconds:g} s"
        except SummaryFailed as failed:
            reason = str(failed)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the turn itself is being cancelled
            reason = "the summarizer was cancelled (the turn was not)"
        except Exception as error:  # any failure of the summarizer's model
            reason = f"{type(error).__name__}: {error}"
        logger.warning(
            "Compaction skipped, the history stays uncompacted (%d events): %s",
            len(events),
            reason,
        )
        self.backoff.failed(events)
        return None

    async def _fitting(self, events: list[Event]) -> Event | None:
        """The inner summary of `events`, or of fewer of them when the summary request
        is too long for the model (then widened to cover all of `events`)."""
        tried = events
        for halving in range(_HALVINGS + 1):
            try:
                summary = await self.inner.maybe_summarize_events(events=tried)
            except SummaryFailed as failed:
                if not failed.too_long or halving == _HALVINGS or len(tried) < 3:
                    raise
                tried = newer_half(tried)
                logger.warning("Summary too long for the model; summarizing %d events", len(tried))
                continue
            compaction = summary.actions.compaction if summary is not None else None
            if compaction is not None and tried is not events:
                compaction.start_timestamp = events[0].timestamp
            return summary
        return None


def _summarizer(policy: ContextPolicy, model: Summarizer) -> BaseEventsSummarizer:
    if isinstance(model, BaseEventsSummarizer):
        return model
    if isinstance(model, DemoLlm):
        return DemoSummarizer(max_chars=policy.summary_max_chars)
    return LlmEventSummarizer(llm=CheckedSummaryLlm(inner=model))


def fitted_threshold(policy: ContextPolicy, window: int, max_output: int) -> int:
    """The compaction threshold for a model of `window` tokens that may reply with up
    to `max_output`: the policy's, or three quarters of what is left of the window after
    the reply's share (at most half of it), whichever is lower."""
    budget = min(policy.budget_tokens, window - min(max_output, window // 2))
    return max(min(policy.threshold_tokens, budget * 3 // 4), 100)


def _sized_model(model: BaseLlm | None) -> OpenAICompatibleLlm | None:
    """The model that knows its context window, when `model` is (or wraps) one."""
    if isinstance(model, ReactLlm):
        model = model.inner
    return model if isinstance(model, OpenAICompatibleLlm) else None


def _follow_context(
    config: EventsCompactionConfig, policy: ContextPolicy, model: BaseLlm | None
) -> None:
    sized = _sized_model(model)
    if sized is None:
        return

    def fit(window: int) -> None:
        config.token_threshold = fitted_threshold(policy, window, sized.max_tokens)

    sized.on_context_window(fit)


def compaction_config(
    policy: ContextPolicy, model: Summarizer, *, agent_model: BaseLlm | None = None
) -> EventsCompactionConfig | None:
    """The App's `events_compaction_config` for `policy` (None when it is off), with
    summaries written by `model`: a model (ADK's summarizer prompt, or the demo's
    summarizer for the demo model) or a ready `BaseEventsSummarizer`. The threshold
    follows the context window of `agent_model` (default: `model`, when it is a model)."""
    if not policy.compaction or isinstance(model, UnusableModel):
        return None  # an unusable model answers with its configuration error, not a summary
    with warnings.catch_warnings():
        # ADK marks compaction experimental; on by default here, the warning is noise.
        warnings.filterwarnings("ignore", r"\[EXPERIMENTAL\]", UserWarning)
        config = EventsCompactionConfig(
            summarizer=GuardedSummarizer(
                _summarizer(policy, model), policy.summary_timeout_seconds
            ),
            token_threshold=policy.threshold_tokens,
            event_retention_size=policy.keep_recent_events,
        )
    sized = agent_model if agent_model is not None else model
    _follow_context(config, policy, sized if isinstance(sized, BaseLlm) else None)
    return config
