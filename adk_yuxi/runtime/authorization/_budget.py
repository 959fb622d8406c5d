"""The counters of one run, shared by everything that charges them.

One `RunBudget` exists per root invocation (see `_binding`). Model calls of every agent
in that invocation are charged to the same `llm_calls` counter, so nested agents count
against the root's limit; a nested invocation that should share the limit (an agent
called as a tool) is bound to the same budget with `RunBindings.adopt`. Failures of
every kind the model may repair (a tool that raised; later also a malformed structured
answer) are charged to one `failures` budget.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..config._config import Limits

__all__ = ["CallCounter", "FailureBudget", "RunBudget"]


@dataclass
class CallCounter:
    """Counts calls against a limit; `charge` returns the number of this call."""

    limit: int
    count: int = 0

    def charge(self) -> int:
        self.count += 1
        return self.count

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit


@dataclass
class FailureBudget:
    """How many failures a run absorbs before it ends. `charge` returns whether the
    run may go on (the failure was within the budget)."""

    limit: int
    spent: Counter[str] = field(default_factory=Counter)

    def charge(self, kind: str = "tool_failed") -> bool:
        self.spent[kind] += 1
        return self.total <= self.limit

    @property
    def total(self) -> int:
        return sum(self.spent.values())

    @property
    def remaining(self) -> int:
        return max(self.limit - self.total, 0)


@dataclass
class RunBudget:
    llm_calls: CallCounter
    tool_calls: CallCounter
    failures: FailureBudget

    @classmethod
    def from_limits(cls, limits: Limits) -> RunBudget:
        return cls(
            llm_calls=CallCounter(limits.max_llm_calls),
            tool_calls=CallCounter(limits.max_tool_calls_per_turn),
            failures=FailureBudget(limits.max_tool_failures),
        )
