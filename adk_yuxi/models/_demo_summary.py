"""The offline demo model's summarizer: deterministic compaction summaries, no LLM.

It keeps what a later question is most likely to need: the user's own statements,
verbatim (each cut at `STATEMENT_CHARS`), the tools the agent used and its last answer.
A previous summary, which ADK hands over as the first event, is read back and continued,
so one summary covers the conversation from its start. Past `max_chars`, the first
statements (how the conversation was set up) and the newest are kept and the ones between
are counted as left out; the session store still holds every one of them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.genai import types
from typing_extensions import override

__all__ = ["SUMMARY_HEADER", "DemoSummarizer", "summary_statements"]

SUMMARY_HEADER = "[Summary of earlier turns"
STATEMENT_CHARS = 300
_FIRST_KEPT = 3
_SAID = "The user said:"
_TOOLS = "Tools used: "
_ANSWER = "The agent's last answer: "
_LEFT_OUT = "(... "
_LEFT_OUT_TAIL = " statements left out of this summary; the session keeps them ...)"
_MAX_TOOLS = 20

Item = str | int
"""A statement, or a count of statements left out at that place."""


def summary_statements(text: str) -> list[str]:
    """The user's statements a demo summary keeps, oldest first ([] if `text` is not
    one)."""
    return [i for i in _parse(text)[0] if isinstance(i, str)]


def _parse(text: str) -> tuple[list[Item], list[str], int, str]:
    """Statements, tools, events covered and last answer of a demo summary."""
    if not text.startswith(SUMMARY_HEADER):
        return [], [], 0, ""
    items: list[Item] = []
    tools: list[str] = []
    answer = ""
    header, _, _ = text.partition("\n")
    digits = header[len(SUMMARY_HEADER) :].lstrip(": ").split(" ", 1)[0]
    events = int(digits) if digits.isdigit() else 0
    for line in text.splitlines()[1:]:
        if line.startswith("- "):
            items.append(line[2:])
        elif line.startswith(_LEFT_OUT) and line.endswith(_LEFT_OUT_TAIL):
            count = line[len(_LEFT_OUT) : -len(_LEFT_OUT_TAIL)]
            items.append(int(count) if count.isdigit() else 0)
        elif line.startswith(_TOOLS):
            tools.extend(t.strip() for t in line[len(_TOOLS) :].rstrip(".").split(","))
        elif line.startswith(_ANSWER):
            answer = line[len(_ANSWER) :]
    return items, [t for t in tools if t], events, answer


def _texts(content: types.Content | None) -> str:
    parts = content.parts if content and content.parts else []
    return "\n".join(p.text for p in parts if p.text and not p.thought).strip()


def _clock(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(timestamp))


def _fit(items: Sequence[Item], max_chars: int) -> list[Item]:
    """The first statements and as many of the newest as fit, one count between."""
    size = sum(len(i) + 3 for i in items if isinstance(i, str))
    if size <= max_chars:
        return list(items)
    head: list[Item] = []
    spent = 0
    rest = list(items)
    while rest and len([h for h in head if isinstance(h, str)]) < _FIRST_KEPT:
        item = rest.pop(0)
        head.append(item)
        spent += len(item) + 3 if isinstance(item, str) else 0
    tail: list[Item] = []
    while rest:
        last = rest[-1]
        if not isinstance(last, str) or spent + len(last) + 3 > max_chars:
            break
        rest.pop()
        spent += len(last) + 3
        tail.insert(0, last)
    left_out = sum(i if isinstance(i, int) else 1 for i in rest)
    return [*head, *([left_out] if left_out else []), *tail]


class DemoSummarizer(BaseEventsSummarizer):
    """A `BaseEventsSummarizer` that writes the summary from the events themselves."""

    def __init__(self, max_chars: int = 32_000) -> None:
        self.max_chars = max_chars

    @override
    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        if not events:
            return None
        items: list[Item] = []
        tools: list[str] = []
        covered = 0
        answer = ""
        for event in events:
            said = _texts(event.content)
            if event.author != "user" and said.startswith(SUMMARY_HEADER):  # the last one
                earlier, used, count, answer = _parse(said)
                items += earlier
                tools += used
                covered += count
                continue
            covered += 1
            tools += [c.name for c in event.get_function_calls() if c.name]
            if not said:
                continue
            if event.author == "user":
                statement = " ".join(said.split())[:STATEMENT_CHARS]
                if statement not in items:
                    items.append(statement)
            else:
                answer = " ".join(said.split())[:STATEMENT_CHARS]
        start, end = events[0].timestamp, events[-1].timestamp
        lines = [f"{SUMMARY_HEADER}: {covered} events, {_clock(start)} to {_clock(end)}]"]
        kept = _fit(items, self.max_chars)
        if kept:
            lines.append(_SAID)
            for item in kept:
                left_out = f"{_LEFT_OUT}{item}{_LEFT_OUT_TAIL}"
                lines.append(left_out if isinstance(item, int) else f"- {item}")
        used = list(dict.fromkeys(tools))[-_MAX_TOOLS:]
        if used:
            lines.append(_TOOLS + ", ".join(used) + ".")
        if answer:
            lines.append(_ANSWER + answer)
        summary = types.Content(role="model", parts=[types.Part(text="\n".join(lines))])
        compaction = EventCompaction(
            start_timestamp=start, end_timestamp=end, compacted_content=summary
        )
        return Event(
            author="user",
            invocation_id=Event.new_id(),
            actions=EventActions(compaction=compaction),
        )
