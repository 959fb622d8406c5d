"""A run's read reuses the events the session's previous run read (parsed once), hands
out copies whose fields are the caller's own, still sees every other writer's events,
and ADK's turns leave the shared events as they are stored."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from adk_yuxi.sessions import SqlSessionService
from adk_yuxi.sessions._event_cache import EventCache
from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import ScriptedLlm
from adk_yuxi.testing._scripted import call

from .test_session_window import APP, fill, said, summary

HELLO = types.Content(role="user", parts=[types.Part(text="and now?")])


def lookup(topic: str) -> dict[str, Any]:
    """Looks a topic up."""
    return {"topic": topic, "facts": ["one", "two"]}


class Watch:
    """Runs turns on one session and keeps the events each run's agent was given."""

    def __init__(self, sessions: SqlSessionService, sid: str) -> None:
        self.sessions, self.sid = sessions, sid
        self.seen: list[list[Event]] = []
        self.model = ScriptedLlm()

        def record(callback_context: CallbackContext) -> None:
            self.seen.append(list(callback_context.session.events))

        agent = LlmAgent(
            name="agent",
            model=self.model,
            tools=[FunctionTool(lookup)],
            before_agent_callback=record,
        )
        self.runner = Runner(app=App(name=APP, root_agent=agent), session_service=sessions)

    async def turn(self, *script: Any) -> None:
        self.model.extend(script or ["fine"])
        async for _ in self.runner.run_async(user_id="u", session_id=self.sid, new_message=HELLO):
            pass

    async def stored(self) -> list[Event]:
        """Every event as stored, parsed afresh (a read outside a run)."""
        full = await self.sessions.get_session(app_name=APP, user_id="u", session_id=self.sid)
        assert full is not None
        return full.events


async def test_a_run_reuses_what_the_last_run_read(services: YuxiServices) -> None:
    sessions = services.session_service
    await fill(sessions, [said("old one", 1.0), said("old two", 2.0, author="agent")])
    watch = Watch(sessions, "s1")
    await watch.turn()
    await watch.turn()
    first, second = watch.seen
    assert second[:3] == first[:3]
    # The two events both runs read from the store: the same parsed values, in events
    # of their own.
    assert all(a.content is b.content for a, b in zip(first[:2], second[:2], strict=True))
    assert all(a is not b for a, b in zip(first[:2], second[:2], strict=True))


async def test_a_field_set_in_one_run_is_not_seen_by_the_next(services: YuxiServices) -> None:
    sessions = services.session_service
    await fill(sessions, [said("old one", 1.0)])
    watch = Watch(sessions, "s1")
    await watch.turn()
    watch.seen[0][0].author = "someone else"
    watch.seen[0][0].content = types.Content(role="user", parts=[types.Part(text="edited")])
    await watch.turn()
    assert watch.seen[1][0].author == "user"
    assert watch.seen[1][0].content == said("old one", 1.0).content


async def test_another_writer_s_events_are_read(services: YuxiServices) -> None:
    """Another service on the same database (as another process) appends between runs."""
    sessions = services.session_service
    await fill(sessions, [said("old one", 1.0)])
    watch = Watch(sessions, "s1")
    await watch.turn()
    other = SqlSessionService(services.store)
    session = await other.get_session(app_name=APP, user_id="u", session_id="s1")
    assert session is not None
    await other.append_event(session, said("from elsewhere", 5.0))
    await other.append_event(session, summary(1.0, 5.0, 6.0))
    await watch.turn()
    given = watch.seen[1]  # the window: from the first event the summary does not cover
    assert given == (await watch.stored())[-1 - len(given) : -1]  # all but the answer
    assert [e.author for e in given] == ["user", "agent", "user", "user", "user"]
    assert given[2].content == said("from elsewhere", 5.0).content
    assert given[3].actions.compaction is not None


async def test_turns_leave_the_shared_events_as_stored(services: YuxiServices) -> None:
    """Tool calls, their results and several model calls a turn, over cached events: what
    each run was given equals the rows parsed afresh."""
    sessions = services.session_service
    await fill(sessions, [said("old one", 1.0)])
    watch = Watch(sessions, "s1")
    for index in range(4):
        await watch.turn(call("lookup", topic=f"t{index}"), f"answer {index}")
    stored = await watch.stored()
    for seen in watch.seen:
        assert seen == stored[: len(seen)]


async def test_reads_outside_a_run_neither_use_nor_fill_the_cache(
    services: YuxiServices,
) -> None:
    sessions = services.session_service
    await fill(sessions, [said("old one", 1.0)])
    watch = Watch(sessions, "s1")
    await watch.turn()
    outside = await watch.stored()
    assert outside[0].content is not watch.seen[0][0].content


def test_the_cache_keeps_the_sessions_read_last() -> None:
    cache = EventCache(max_events=3)
    events = [said(f"e{i}", float(i)) for i in range(4)]
    cache.keep(1, {1: events[0], 2: events[1]})
    cache.keep(2, {1: events[2]})
    assert cache.size == 3
    cache.known(1)  # read last: session 2 goes first
    cache.keep(3, {1: events[3]})
    assert cache.known(2) == {} and cache.known(1) and cache.known(3)
    cache.keep(1, {2: events[1]})  # a later read replaces the entry
    assert cache.known(1) == {2: events[1]} and cache.size == 2
    cache.keep(4, {i: events[0] for i in range(4)})  # larger than the cache: not kept
    assert cache.known(4) == {}


def test_a_cache_of_zero_keeps_nothing() -> None:
    cache = EventCache(max_events=0)
    cache.keep(1, {1: said("x", 1.0)})
    assert cache.size == 0 and cache.known(1) == {}
    with pytest.raises(ValueError):
        EventCache(max_events=-1)
