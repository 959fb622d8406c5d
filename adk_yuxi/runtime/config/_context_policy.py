"""The context policy: how much conversation history the model is sent, and when older
turns are folded into a summary (ADK's event compaction) to keep it there.

ADK compacts in two modes; the policy uses the token-threshold one on purpose. Its
summaries roll up (each new one replaces the last and is given the last as input), so the
request stays bounded at any conversation length. The sliding-window mode (every N turns)
writes summaries that never roll up: the request still grows, one summary per N turns.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["DEFAULT_BUDGET_TOKENS", "DEFAULT_COMPACT_AT_EVENTS", "ContextPolicy"]

DEFAULT_BUDGET_TOKENS = 32_000
"""About 128,000 characters of instruction and history: dozens of ordinary turns."""

DEFAULT_COMPACT_AT_EVENTS = 100
"""ADK builds the model's contents from every event since the latest summary on every
model call, at a CPU cost per event whatever its size: a long run of small events is
slow although its tokens are few. Measured in `docs/long-conversations.md`."""

_OFF = {"off", "false", "no", "0", "disabled"}
_ON = {"on", "true", "yes", "1", "enabled"}


class ContextPolicy(BaseModel):
    """What the model is sent of a long conversation. On by default.

    - `budget_tokens`: the most prompt tokens (instruction and history, as the model
      reports them) a request should reach.
    - `compact_at_tokens`: compact once a model call's prompt reached this (default:
      three quarters of the budget, so one more turn still fits).
    - `compact_at_events`: compact too once this many events follow the latest
      summary, however few tokens they are (None: tokens only).
    - `keep_recent_events`: the newest events that stay verbatim after a compaction.
    - `summarizer_model`: the model that writes summaries (default: the agent's own).
    - `summary_timeout_seconds`: a summary not written by then is given up (logged);
      the history stays uncompacted and the next turn tries again.

    Compaction never deletes: every event stays in the session store and the summary
    event (`actions.compaction`) names the time range it covers. `compaction=False`
    (YAML `context: {compaction: off}`, or `context: off`) sends the whole history.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    compaction: bool = True
    budget_tokens: int = Field(default=DEFAULT_BUDGET_TOKENS, ge=500, le=10_000_000)
    compact_at_tokens: int | None = Field(default=None, ge=100, le=10_000_000)
    compact_at_events: int | None = Field(default=DEFAULT_COMPACT_AT_EVENTS, ge=2, le=1_000_000)
    keep_recent_events: int = Field(default=8, ge=0, le=10_000)
    summarizer_model: str | None = Field(default=None, min_length=1)
    summary_timeout_seconds: float = Field(default=120.0, gt=0, le=3600)

    @model_validator(mode="before")
    @classmethod
    def _switch(cls, data: Any) -> Any:
        """`context: off` / `context: on` (or a bool) as the whole policy."""
        if isinstance(data, bool):
            return {"compaction": data}
        if isinstance(data, str) and data.strip().lower() in _OFF | _ON:
            return {"compaction": data.strip().lower() in _ON}
        return data

    @model_validator(mode="after")
    def _threshold_within_budget(self) -> ContextPolicy:
        if self.compact_at_tokens is not None and self.compact_at_tokens > self.budget_tokens:
            raise ValueError(
                f"compact_at_tokens ({self.compact_at_tokens}) must not exceed"
                f" budget_tokens ({self.budget_tokens})"
            )
        if self.compact_at_events is not None and self.compact_at_events <= self.keep_recent_events:
            raise ValueError(
                f"compact_at_events ({self.compact_at_events}) must exceed"
                f" keep_recent_events ({self.keep_recent_events})"
            )
        return self

    @property
    def threshold_tokens(self) -> int:
        """The prompt size that triggers a compaction."""
        if self.compact_at_tokens is not None:
            return self.compact_at_tokens
        return self.budget_tokens * 3 // 4

    @property
    def summary_max_chars(self) -> int:
        """What a summary may take of the budget: a quarter, in characters (about four
        to a token). Summarizers that can bound their output (the demo's) keep to it."""
        return self.budget_tokens

    @classmethod
    def off(cls) -> ContextPolicy:
        """The whole history on every model call, never compacted."""
        return cls(compaction=False)
