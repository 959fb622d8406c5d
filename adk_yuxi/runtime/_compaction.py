"""ADK's event compaction, wired from a `ContextPolicy`.

The summarizer is the agent's own model (ADK's `LlmEventSummarizer`), the policy's
`summarizer_model`, or the demo's `DemoSummarizer` when that model is the offline demo
model. It is wrapped so that a summary that fails or takes too long is logged with the
reason and given up: the history stays uncompacted and the turn is not failed.

ADK runs the compaction in `Runner.run_async` after the turn's last event was yielded, so
the answer has streamed when it starts. One exception is ADK's: a turn whose own model
calls cross the threshold (a long tool loop) is compacted before its next model call, so
that call stays within the budget.
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

from ..models import DemoLlm, DemoSummarizer, UnusableModel
from ._context_policy import ContextPolicy

__all__ = ["GuardedSummarizer", "compaction_config"]

logger = logging.getLogger("adk_yuxi.runtime.compaction")

Summarizer = BaseLlm | BaseEventsSummarizer


class GuardedSummarizer(BaseEventsSummarizer):
    """A summarizer whose failure or timeout is logged and returns no summary."""

    def __init__(self, inner: BaseEventsSummarizer, timeout_seconds: float) -> None:
        self.inner = inner
        self.timeout_seconds = timeout_seconds

    @override
    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        try:
            return await asyncio.wait_for(
                self.inner.maybe_summarize_events(events=events), self.timeout_seconds
            )
        except TimeoutError:
            reason = f"no summary within {self.timeout_seconds:g} s"
        except Exception as error:  # any failure of the summarizer's model
            reason = f"{type(error).__name__}: {error}"
        logger.warning(
            "Compaction skipped, the history stays uncompacted (%d events): %s",
            len(events),
            reason,
        )
        return None


def _summarizer(policy: ContextPolicy, model: Summarizer) -> BaseEventsSummarizer:
    if isinstance(model, BaseEventsSummarizer):
        return model
    if isinstance(model, DemoLlm):
        return DemoSummarizer(max_chars=policy.summary_max_chars)
    return LlmEventSummarizer(llm=model)


def compaction_config(policy: ContextPolicy, model: Summarizer) -> EventsCompactionConfig | None:
    """The App's `events_compaction_config` for `policy` (None when it is off), with
    summaries written by `model`: a model (ADK's summarizer prompt, or the demo's
    summarizer for the demo model) or a ready `BaseEventsSummarizer`."""
    if not policy.compaction or isinstance(model, UnusableModel):
        return None  # an unusable model answers with its configuration error, not a summary
    with warnings.catch_warnings():
        # ADK marks compaction experimental; on by default here, the warning is noise.
        warnings.filterwarnings("ignore", r"\[EXPERIMENTAL\]", UserWarning)
        return EventsCompactionConfig(
            summarizer=GuardedSummarizer(
                _summarizer(policy, model), policy.summary_timeout_seconds
            ),
            token_threshold=policy.threshold_tokens,
            event_retention_size=policy.keep_recent_events,
        )
