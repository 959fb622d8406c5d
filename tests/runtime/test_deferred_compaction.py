"""A turn that starts with the history over the compaction threshold answers from the
newest events that fit, before any summary is written; the summary is written after the
run, by the App's summarizer with its guards, and lands once. A history long in events
but short in tokens is sent whole and compacted after the run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from google.adk.apps import App
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.events import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_yuxi.access import Role
from adk_yuxi.runtime import AgentConfig, Compaction, ContextPolicy, Toolbox, build_app
from adk_yuxi.runtime.assembly._deferred_compaction import OVER_BUDGET_KEY
from adk_yuxi.sessions import SessionWindow, SqlSessionService
from adk_yuxi.testing import ScriptedLlm

from ._kit import USER, Kit
from .test_prompt_estimate import estimator_calls

POLICY = ContextPolicy(budget_tokens=1000, keep_recent_events=2)  # compacts at 750 tokens
BY_COUNT = ContextPolicy(budget_tokens=100_000, keep_recent_events=2, compact_at_events=20)
LINE = "a sentence of about sixty characters, said in an old turn."


class Summaries(BaseEventsSummarizer):
    """Writes a short summary (or fails, or lets `meanwhile` run first), and keeps what
    the model had been asked by then."""

    def __init__(self, model: ScriptedLlm, fail: bool = False) -> None:
        self.model, self.fail = model, fail
        self.asked_before: list[int] = []
        self.meanwhile: Any = None
        self.returned = asyncio.Event()

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        self.asked_before.append(len(self.model.requests))
        if self.meanwhile is not None:
            await self.meanwhile()
        if self.fail:
            raise RuntimeError("summarizer down")
        compaction = EventCompaction(
            start_timestamp=events[0].timestamp,
            end_timestamp=events[-1].timestamp,
            compacted_content=types.Content(role="model", parts=[types.Part(text="Summary.")]),
        )
        self.returned.set()
        return Event(author="user", actions=EventActions(compaction=compaction))


def _app(kit: Kit, model: ScriptedLlm, summaries: Summaries, policy: ContextPolicy = POLICY) -> App:
    return build_app(
        AgentConfig(name="a", tools=(), context=policy),
        kit.principal(role=Role.ADMIN),
        model=model,
        toolbox=Toolbox(registry=kit.registry),
        capabilities=[Compaction(summarizer=summaries)],
    )


async def _history(sessions: SqlSessionService, turns: int) -> None:
    """`turns` old turns (a question and an answer each, no reported prompt size)."""
    session = await sessions.create_session(app_name="a", user_id=USER, session_id="s")
    for i in range(turns):
        for author, role in (("user", "user"), ("a", "model")):
            text = f"{i}: {LINE}"
            content = types.Content(role=role, parts=[types.Part(text=text)])
            event = Event(author=author, invocation_id=f"old-{i}", content=content)
            await sessions.append_event(session, event)


async def _turn(runner: Runner, text: str) -> list[Event]:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [e async for e in runner.run_async(user_id=USER, session_id="s", new_message=message)]


def _texts(model: ScriptedLlm, index: int) -> list[str]:
    return [
        p.text or ""
        for c in model.requests[index].contents
        for p in c.parts or ()
        if p.text is not None
    ]


async def _stored(sessions: SqlSessionService) -> list[Event]:
    session = await sessions.get_session(app_name="a", user_id=USER, session_id="s")
    assert session is not None
    return session.events


async def test_the_answer_comes_from_a_tail_and_the_summary_after(tmp_path: Path) -> None:
    model = ScriptedLlm(["first answer", "second answer"])
    summaries = Summaries(model)
    async with SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}") as sessions:
        await _history(sessions, 60)  # about 2,000 tokens
        runner = Runner(app=_app(Kit(tmp_path), model, summaries), session_service=sessions)
        events = await _turn(runner, "and now?")
        assert any(
            e.content and e.content.parts and e.content.parts[0].text == "first answer"
            for e in events
        )
        sent = _texts(model, 0)
        assert sent[-1] == "and now?" and not any(t.startswith("0: ") for t in sent)
        assert 1 < len(sent) < 60  # the newest turns that fit
        answer = next(e for e in events if e.author == "a")
        assert (answer.custom_metadata or {}).get(OVER_BUDGET_KEY) is True
        await runner.close()  # waits for the compaction in flight
        assert summaries.asked_before == [1]  # after the model answered
        stored = await _stored(sessions)
        assert [e for e in stored if e.actions.compaction] == stored[-1:]
        assert stored[-1].actions.compaction.start_timestamp == stored[0].timestamp  # type: ignore[union-attr]

        runner = Runner(app=_app(Kit(tmp_path), model, summaries), session_service=sessions)
        await _turn(runner, "and then?")
        await runner.close()
        assert "Summary." in _texts(model, 1)  # the summary and what follows it
        assert summaries.asked_before == [1]  # nothing compacted again


async def test_a_failed_summary_is_not_stored_and_the_next_turn_tries_again(
    tmp_path: Path,
) -> None:
    model = ScriptedLlm(["one", "two"])
    summaries = Summaries(model, fail=True)
    async with SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}") as sessions:
        await _history(sessions, 60)
        for text in ("and now?", "and then?"):
            runner = Runner(app=_app(Kit(tmp_path), model, summaries), session_service=sessions)
            await _turn(runner, text)
            await runner.close()
        assert summaries.asked_before == [1, 2]
        assert not [e for e in await _stored(sessions) if e.actions.compaction]
        assert not any(t.startswith("0: ") for t in _texts(model, 1))  # still a tail


async def test_a_summary_written_while_another_writer_appends_covers_what_it_read(
    tmp_path: Path,
) -> None:
    """Another process appends while the summary is written: the summary lands, covering
    only what it read, and the other writer's message stays after it, verbatim."""
    model = ScriptedLlm(["one", "two"])
    summaries = Summaries(model)
    db = f"sqlite+aiosqlite:///{tmp_path / 's.db'}"
    async with SqlSessionService(db) as sessions, SqlSessionService(db) as other:

        async def another_writer() -> None:
            summaries.meanwhile = None
            session = await other.get_session(app_name="a", user_id=USER, session_id="s")
            assert session is not None
            said = types.Content(role="user", parts=[types.Part(text="from elsewhere")])
            await other.append_event(session, Event(author="user", content=said))

        summaries.meanwhile = another_writer
        await _history(sessions, 60)
        runner = Runner(app=_app(Kit(tmp_path), model, summaries), session_service=sessions)
        await _turn(runner, "and now?")
        await runner.close()
        stored = await _stored(sessions)
        (summary,) = [e for e in stored if e.actions.compaction]
        elsewhere = next(e for e in stored if e.content and "from elsewhere" in _text(e))
        assert summary.actions.compaction is not None
        assert summary.actions.compaction.end_timestamp is not None
        assert summary.actions.compaction.end_timestamp < elsewhere.timestamp


def _text(event: Event) -> str:
    return "".join(p.text or "" for p in (event.content.parts if event.content else None) or ())


class _SummaryLandsMeanwhile(BasePlugin):
    """Lets the background summary finish after the next run read its session and before
    that run's first append: the window in which a summary stored by the task made the
    run's copy stale."""

    def __init__(self, gate: asyncio.Event, summaries: Summaries) -> None:
        super().__init__(name="summary_lands_meanwhile")
        self.gate, self.summaries, self.armed = gate, summaries, False

    async def on_user_message_callback(self, **_: Any) -> types.Content | None:
        if self.armed:
            self.gate.set()
            await self.summaries.returned.wait()
            await asyncio.sleep(0.3)  # what followed the summarizer (the append) is done
        return None


async def test_a_summary_finished_during_the_next_runs_start_fails_no_run(tmp_path: Path) -> None:
    model = ScriptedLlm(["one", "two", "three"])
    summaries = Summaries(model)
    gate = asyncio.Event()

    async def slow() -> None:
        await gate.wait()

    summaries.meanwhile = slow
    meanwhile = _SummaryLandsMeanwhile(gate, summaries)
    async with SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}") as sessions:
        await _history(sessions, 60)
        app = build_app(
            AgentConfig(name="a", tools=(), context=POLICY),
            Kit(tmp_path).principal(role=Role.ADMIN),
            model=model,
            capabilities=[Compaction(summarizer=summaries), meanwhile],
        )
        runner = Runner(app=app, session_service=sessions)
        await _turn(runner, "and now?")  # a tail; the summary waits at the gate
        meanwhile.armed = True
        events = await _turn(runner, "and then?")
        assert events[-1].content is not None and _text(events[-1]) == "two"
        meanwhile.armed = False
        assert not [e for e in await _stored(sessions) if e.actions.compaction]
        await _turn(runner, "and again?")  # stores the summary before its message
        stored = await _stored(sessions)
        await runner.close()
        at = next(i for i, e in enumerate(stored) if e.actions.compaction)
        assert _text(stored[at + 1]) == "and again?"


async def test_runs_in_flight_start_one_compaction(tmp_path: Path) -> None:
    model = ScriptedLlm(["one", "two"])
    summaries = Summaries(model)
    gate = asyncio.Event()

    async def slow() -> None:
        await gate.wait()

    summaries.meanwhile = slow
    async with SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}") as sessions:
        await _history(sessions, 60)
        runner = Runner(app=_app(Kit(tmp_path), model, summaries), session_service=sessions)
        await _turn(runner, "and now?")
        await asyncio.sleep(0)  # the compaction starts and waits at the gate
        await _turn(runner, "and then?")  # still over: a tail again, no second compaction
        gate.set()
        await runner.close()
        assert len(summaries.asked_before) == 1
        # Stored when the runner closed, covering what it read before the second turn.
        assert len([e for e in await _stored(sessions) if e.actions.compaction]) == 1
        summaries.meanwhile = None
        model.extend(["three"])
        runner = Runner(app=_app(Kit(tmp_path), model, summaries), session_service=sessions)
        await _turn(runner, "and again?")
        await runner.close()
        assert len([e for e in await _stored(sessions) if e.actions.compaction]) == 1


async def test_a_history_under_the_threshold_is_left_alone(tmp_path: Path) -> None:
    model = ScriptedLlm(["one"])
    summaries = Summaries(model)
    async with SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}") as sessions:
        await _history(sessions, 5)
        runner = Runner(app=_app(Kit(tmp_path), model, summaries), session_service=sessions)
        events = await _turn(runner, "and now?")
        await runner.close()
        assert _texts(model, 0)[0].startswith("0: ")  # everything
        assert summaries.asked_before == []
        assert all(OVER_BUDGET_KEY not in (e.custom_metadata or {}) for e in events)


async def test_adk_s_own_session_service_too(tmp_path: Path) -> None:
    """What `adk run` / `adk web` use without a `yuxi+` URI."""
    model = ScriptedLlm(["one"])
    summaries = Summaries(model)
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="a", user_id=USER, session_id="s")
    for i in range(60):
        content = types.Content(role="user", parts=[types.Part(text=f"{i}: {LINE}")])
        await sessions.append_event(session, Event(author="user", content=content))
    runner = Runner(app=_app(Kit(tmp_path), model, summaries), session_service=sessions)
    await _turn(runner, "and now?")
    await runner.close()
    assert summaries.asked_before == [1]
    stored = await sessions.get_session(app_name="a", user_id=USER, session_id="s")
    assert stored is not None and len([e for e in stored.events if e.actions.compaction]) == 1


async def test_a_call_still_open_keeps_the_run_whole(tmp_path: Path) -> None:
    """An old call nobody answered yet may be answered by this run: nothing is left out,
    and ADK compacts before the model call as it does alone."""
    model = ScriptedLlm(["one"])
    summaries = Summaries(model)
    async with SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}") as sessions:
        session = await sessions.create_session(app_name="a", user_id=USER, session_id="s")
        call = types.Part(function_call=types.FunctionCall(id="c1", name="ask", args={}))
        await sessions.append_event(
            session, Event(author="a", content=types.Content(role="model", parts=[call]))
        )
        await _history_after(sessions, session, 60)
        runner = Runner(app=_app(Kit(tmp_path), model, summaries), session_service=sessions)
        await _turn(runner, "and now?")
        await runner.close()
        assert summaries.asked_before == [0]  # before the model call


async def _history_after(sessions: SqlSessionService, session: Any, turns: int) -> None:
    for i in range(turns):
        content = types.Content(role="user", parts=[types.Part(text=f"{i}: {LINE}")])
        await sessions.append_event(session, Event(author="user", content=content))


async def test_many_small_events_are_sent_whole_and_compacted_after_the_run(
    tmp_path: Path,
) -> None:
    """30 events far under the token threshold, over `compact_at_events`: the turn sends
    all of them (no tail, no mark), the summary is written after the answer, and the
    next turn is sent the summary and what follows it."""
    model = ScriptedLlm(["first answer", "second answer"])
    summaries = Summaries(model)
    async with SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}") as sessions:
        await _history(sessions, 15)
        runner = Runner(
            app=_app(Kit(tmp_path), model, summaries, BY_COUNT), session_service=sessions
        )
        with estimator_calls() as estimates:
            events = await _turn(runner, "and now?")
        # ADK estimates before the first model call (no size reported yet), not after
        # the run: its own check still reads the run's prompt size, not the summary's.
        assert estimates == [1]
        assert all(OVER_BUDGET_KEY not in (e.custom_metadata or {}) for e in events)
        sent = _texts(model, 0)
        assert sent[0].startswith("0: ") and len(sent) == 31  # the whole history
        await runner.close()
        assert summaries.asked_before == [1]  # after the model answered
        stored = await _stored(sessions)
        assert [e for e in stored if e.actions.compaction] == stored[-1:]

        await _turn(runner, "and then?")
        await runner.close()
        sent = _texts(model, 1)
        assert "Summary." in sent and not any(t.startswith("0: ") for t in sent)
        assert len(sent) < 8  # the summary, the newest events, the question
        assert summaries.asked_before == [1]  # 5 events since the summary: nothing more


async def test_without_an_event_count_many_small_events_stay(tmp_path: Path) -> None:
    model = ScriptedLlm(["one"])
    summaries = Summaries(model)
    policy = BY_COUNT.model_copy(update={"compact_at_events": None})
    async with SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}") as sessions:
        await _history(sessions, 15)
        runner = Runner(app=_app(Kit(tmp_path), model, summaries, policy), session_service=sessions)
        await _turn(runner, "and now?")
        await runner.close()
        assert summaries.asked_before == []
        assert not [e for e in await _stored(sessions) if e.actions.compaction]


async def test_the_event_count_keeps_windowed_reads_short(tmp_path: Path) -> None:
    """The second compaction by count is made from the run's windowed session (the
    first summary and what follows it): its summary still stores a window floor, so a
    run's read starts at the newest summary."""
    model = ScriptedLlm([f"answer {i}" for i in range(12)])
    summaries = Summaries(model)
    async with SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 's.db'}") as sessions:
        await _history(sessions, 15)
        runner = Runner(
            app=_app(Kit(tmp_path), model, summaries, BY_COUNT), session_service=sessions
        )
        for i in range(11):  # 2 events a turn: a second compaction by the tenth
            await _turn(runner, f"question {i}")
        await runner.close()
        assert len(summaries.asked_before) == 2
        whole = await _stored(sessions)
        windowed = await sessions.get_session(
            app_name="a", user_id=USER, session_id="s", config=SessionWindow()
        )
        assert windowed is not None and len(whole) > 50
        assert windowed.events[0].timestamp > whole[0].timestamp
        assert len(windowed.events) <= 2 + 1 + 2 * 2  # kept, the summary, the turns since
