"""The model sees the same contents whether the Runner reads the whole session or the
window (`SessionWindow`), through ADK's own token-threshold compaction."""

from __future__ import annotations

from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.apps.app import App, EventsCompactionConfig
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.genai import types

from adk_yuxi.sessions import SessionWindow, SqlSessionService
from adk_yuxi.testing import ScriptedLlm, call

TURNS = 8


class JoiningSummarizer(BaseEventsSummarizer):
    """Deterministic: the summary is the texts it covers, joined (the previous summary,
    handed over first, rolls into the next)."""

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        texts = [
            part.text or (part.function_call.name if part.function_call else "result")
            for event in events
            if event.content
            for part in event.content.parts or ()
        ]
        content = types.Content(role="model", parts=[types.Part(text=" / ".join(texts))])
        compaction = EventCompaction(
            start_timestamp=events[0].timestamp,
            end_timestamp=events[-1].timestamp,
            compacted_content=content,
        )
        return Event(
            author="user", invocation_id=Event.new_id(), actions=EventActions(compaction=compaction)
        )


def lookup(q: str) -> dict[str, str]:
    """Looks a thing up."""
    return {"found": q}


def script() -> list[object]:
    turns: list[object] = []
    for turn in range(TURNS):
        answer = types.Content(role="model", parts=[types.Part(text=f"answer {turn}")])
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=5000)
        turns += [call("lookup", q=f"q{turn}"), LlmResponse(content=answer, usage_metadata=usage)]
    return turns


async def run(db: Path, run_config: RunConfig) -> tuple[ScriptedLlm, SqlSessionService]:
    model = ScriptedLlm(script())
    agent = LlmAgent(name="assistant", model=model, tools=[lookup])
    app = App(
        name="chat",
        root_agent=agent,
        events_compaction_config=EventsCompactionConfig(
            summarizer=JoiningSummarizer(), token_threshold=1000, event_retention_size=2
        ),
    )
    sessions = SqlSessionService(f"sqlite+aiosqlite:///{db}")
    runner = Runner(app=app, session_service=sessions)
    await sessions.create_session(app_name="chat", user_id="u", session_id="s")
    for turn in range(TURNS):
        message = types.Content(role="user", parts=[types.Part(text=f"question {turn}")])
        async for _ in runner.run_async(
            user_id="u", session_id="s", new_message=message, run_config=run_config
        ):
            pass
    return model, sessions


async def test_windowed_and_full_reads_give_the_model_the_same_contents(tmp_path: Path) -> None:
    windowed, window_sessions = await run(
        tmp_path / "window.db", RunConfig(get_session_config=SessionWindow())
    )
    full, full_sessions = await run(tmp_path / "full.db", RunConfig())
    try:
        assert len(windowed.requests) == len(full.requests) == 2 * TURNS
        for seen, expected in zip(windowed.requests, full.requests, strict=True):
            assert seen.contents == expected.contents
        # Compaction happened, and the window is much smaller than the history.
        every = await window_sessions.get_session(app_name="chat", user_id="u", session_id="s")
        window = await window_sessions.get_session(
            app_name="chat", user_id="u", session_id="s", config=SessionWindow()
        )
        assert every is not None and window is not None
        summaries = [e for e in every.events if e.actions and e.actions.compaction]
        assert len(summaries) >= 3
        assert len(window.events) <= 8 < len(every.events)
        assert window.events == every.events[-len(window.events) :]
        # The last request is bounded: the newest summary and the recent events.
        assert len(windowed.requests[-1].contents) <= 8
    finally:
        await window_sessions.close()
        await full_sessions.close()
