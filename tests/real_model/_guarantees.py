"""What the real-model check asserts of every turn and every session: the runtime's
guarantees, never the model's answers."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from google.adk.events import Event

from adk_yuxi.guards import returned_error_code
from adk_yuxi.models import MODEL_CONTEXT_EXCEEDED

SAME_FAILURE_STOP = 3
"""`Limits.stop_after_same_failure` at its default."""


def shown_text(events: Sequence[Event]) -> str:
    """What the user reads at the end of a turn: the last event with text (not a thought)."""
    for event in reversed(events):
        parts = event.content.parts if event.content and event.content.parts else []
        text = "".join(p.text or "" for p in parts if not p.thought).strip()
        if text:
            return text
    return ""


def _same_failures(events: Sequence[Event]) -> int:
    calls = {c.id: c for e in events for c in e.get_function_calls()}
    failed: Counter[str] = Counter()
    for event in events:
        for response in event.get_function_responses():
            if returned_error_code(response.response) is None:
                continue
            call = calls.get(response.id)
            args = json.dumps(call.args if call else None, sort_keys=True, default=str)
            failed[f"{response.name}:{args}"] += 1
    return max(failed.values(), default=0)


@dataclass
class Turn:
    scenario: str
    message: str
    seconds: float
    shown: str
    error_code: str | None
    tool_calls: int
    same_failures: int

    @classmethod
    def of(cls, scenario: str, message: str, seconds: float, events: Sequence[Event]) -> Turn:
        codes = [e.error_code for e in events if e.error_code]
        return cls(
            scenario=scenario,
            message=message,
            seconds=seconds,
            shown=shown_text(events),
            error_code=str(codes[-1]) if codes else None,
            tool_calls=sum(len(e.get_function_calls()) for e in events),
            same_failures=_same_failures(events),
        )

    def problems(self) -> list[str]:
        found = []
        if not self.shown:
            found.append("the turn ended with nothing the user sees")
        if self.same_failures > SAME_FAILURE_STOP:
            found.append(f"the same failing call ran {self.same_failures} times")
        if self.error_code == "MODEL_UNREACHABLE":
            # Nothing of the runtime was checked against the model: a check, not a pass.
            found.append("the model server could not be reached")
        return found


@dataclass
class Verdict:
    turns: list[Turn] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    compactions: int = 0

    def add_turn(self, turn: Turn) -> None:
        self.turns.append(turn)
        self.problems += [f"{turn.scenario}: {p} ({turn.message[:40]!r})" for p in turn.problems()]
        shown = turn.shown.replace("\n", " ")[:70]
        state = turn.error_code or "ok"
        print(f"  {turn.seconds:6.1f}s {state:<24} {turn.tool_calls:2d} calls  {shown}", flush=True)

    def check_session(self, scenario: str, events: Sequence[Event]) -> None:
        """No stored summary is an error text or empty; the session is not wedged (two
        turns in a row refused for length)."""
        for event in events:
            compaction = event.actions.compaction
            if compaction is None:
                continue
            self.compactions += 1
            content = compaction.compacted_content
            parts = content.parts if content and content.parts else []
            text = "".join(p.text or "" for p in parts).strip()
            if not text or text.startswith(("[MODEL_", "[YUXI_", "[REACT_")):
                self.problems.append(f"{scenario}: a failed summary was stored: {text[:80]!r}")
        codes = [t.error_code for t in self.turns if t.scenario == scenario]
        for first, second in itertools.pairwise(codes):
            if first == second == MODEL_CONTEXT_EXCEEDED:
                self.problems.append(f"{scenario}: two turns in a row failed for length")
                break
