"""The demo summarizer: deterministic summaries that keep the user's statements, roll a
previous summary forward, keep to their size, and say what range they cover."""

from __future__ import annotations

from google.adk.events.event import Event
from google.adk.events.event_actions import EventCompaction
from google.genai import types

from adk_yuxi.models import DemoSummarizer
from adk_yuxi.models._demo_recall import recall_said
from adk_yuxi.models._demo_summary import SUMMARY_HEADER, summary_statements
from adk_yuxi.models._request import RequestView


def _event(author: str, text: str, ts: float) -> Event:
    role = "user" if author == "user" else "model"
    content = types.Content(role=role, parts=[types.Part(text=text)])
    return Event(author=author, invocation_id="i", content=content, timestamp=ts)


def _summary(event: Event | None) -> tuple[str, EventCompaction]:
    assert event is not None and event.actions.compaction is not None
    compaction = event.actions.compaction
    assert compaction.compacted_content is not None and compaction.compacted_content.parts
    return compaction.compacted_content.parts[0].text or "", compaction


def _seed(text: str, ts: float) -> Event:
    """As ADK hands a previous summary to the next one: its text, at its start."""
    return _event("model", text, ts)


async def test_keeps_statements_tools_and_range() -> None:
    call = types.Part(function_call=types.FunctionCall(name="save_note", args={"text": "x"}))
    events = [
        _event("user", "My locker code\nis 4711.", 10.0),
        Event(
            author="a",
            invocation_id="i",
            content=types.Content(role="model", parts=[call]),
            timestamp=11.0,
        ),
        _event("a", "Noted.", 12.0),
        _event("user", "My locker code\nis 4711.", 13.0),  # said twice, kept once
    ]
    text, compaction = _summary(await DemoSummarizer().maybe_summarize_events(events=events))
    assert (compaction.start_timestamp, compaction.end_timestamp) == (10.0, 13.0)
    assert text.startswith(f"{SUMMARY_HEADER}: 4 events, 1970-01-01 00:00:10 UTC")
    assert summary_statements(text) == ["My locker code is 4711."]
    assert "Tools used: save_note." in text and "The agent's last answer: Noted." in text
    again = await DemoSummarizer().maybe_summarize_events(events=events)
    assert _summary(again)[0] == text  # deterministic


async def test_rolls_the_previous_summary_forward() -> None:
    summarizer = DemoSummarizer()
    first, _ = _summary(
        await summarizer.maybe_summarize_events(events=[_event("user", "First fact.", 1.0)])
    )
    second, compaction = _summary(
        await summarizer.maybe_summarize_events(
            events=[_seed(first, 1.0), _event("user", "Second fact.", 5.0)]
        )
    )
    assert summary_statements(second) == ["First fact.", "Second fact."]
    assert second.startswith(f"{SUMMARY_HEADER}: 2 events")
    assert compaction.start_timestamp == 1.0  # from the start of the conversation
    # A user typing something that looks like a summary is a statement, not a summary.
    fake = await summarizer.maybe_summarize_events(events=[_event("user", first, 9.0)])
    assert summary_statements(_summary(fake)[0]) == [" ".join(first.split())]


async def test_keeps_to_its_size_with_the_first_and_newest_statements() -> None:
    summarizer = DemoSummarizer(max_chars=600)
    text = ""
    ts = 0.0
    for batch in range(5):
        events = [_seed(text, 0.0)] if text else []
        for i in range(20):
            ts += 1
            events.append(_event("user", f"Statement {batch}-{i} about the quarterly plan.", ts))
        text, _ = _summary(await summarizer.maybe_summarize_events(events=events))
    kept = summary_statements(text)
    assert sum(len(s) + 3 for s in kept) <= 600
    assert kept[:3] == [f"Statement 0-{i} about the quarterly plan." for i in range(3)]
    assert kept[-1] == "Statement 4-19 about the quarterly plan."
    left_out = 100 - len(kept)
    assert f"(... {left_out} statements left out of this summary" in text
    assert text.startswith(f"{SUMMARY_HEADER}: 100 events")


async def test_nothing_to_summarize() -> None:
    assert await DemoSummarizer().maybe_summarize_events(events=[]) is None


def _view(*contents: types.Content) -> RequestView:
    return RequestView(tools=(), contents=contents)


def _said(role: str, text: str) -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=text)])


async def test_recall_answers_from_the_summary_or_the_conversation() -> None:
    summary = DemoSummarizer()
    text, _ = _summary(
        await summary.maybe_summarize_events(
            events=[_event("user", "My locker code is 4711.", 1.0)]
        )
    )
    question = _said("user", "What did I tell you about my locker code?")
    from_summary = recall_said(question.parts[0].text or "", _view(_said("model", text), question))  # type: ignore[index]
    assert from_summary is not None
    assert "4711" in str(from_summary.content) and "summary" in str(from_summary.content)

    newer = _said("user", "My locker code is now 1234.")
    latest = recall_said(
        "what did I say about locker code", _view(_said("model", text), newer, question)
    )
    assert (
        latest is not None
        and "1234" in str(latest.content)
        and "summary" not in str(latest.content)
    )

    assert recall_said("what did I say about the weather?", _view(newer, question)) is None
    assert recall_said("tell me about my locker code", _view(newer, question)) is None
