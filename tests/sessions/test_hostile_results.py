"""Whatever a tool or a model returns, the session stays readable, answerable and
deletable: arbitrary JSON-like values (deep, wide, cyclic, non-UTF-8 bytes, lone
surrogates, NaN and infinities, huge integers) returned by a real tool go through a turn
of the real Runner, read back, serve the next turn and delete, on SQLite and on
PostgreSQL. Rows stored past the reader's bounds before they were enforced read back
bounded and delete too."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.runners import Runner
from google.genai import types
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from adk_yuxi._sql.jsonbounds import CUT_MARK, CYCLE_REASON, INT_REASON, MAX_DEPTH
from adk_yuxi.runtime import AgentConfig, LocalPrincipals, Toolbox, build_app
from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools import ToolRegistry, tool

APP = "hostile"


class Huge:
    """An integer of `digits` digits (drawn as this: Hypothesis cannot print one)."""

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"Huge({self.digits})"


LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([Huge(5000), Huge(4400), Huge(20)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["lone \ud800", "\udfff", "nul \x00", "\x1b]0;x\x07"]),
    st.binary(max_size=8),
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


def real(value: Any) -> Any:
    if isinstance(value, Huge):
        return -(10**value.digits)
    if isinstance(value, list):
        return [real(v) for v in value]
    if isinstance(value, dict):
        return {k: real(v) for k, v in value.items()}
    return value


def shaped(base: Any, depth: int, cyclic: bool) -> Any:
    """`base` nested `depth` levels (lists and dicts by turns), made to contain itself."""
    value = real(base)
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    if cyclic:
        holder: dict[str, Any] = {"v": value}
        holder["self"] = holder
        return holder
    return value


class World:
    """One event loop, one database and one Runner for every example of a test."""

    def __init__(self, url: str, tmp_path: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.services: YuxiServices = open_services(url, blob_dir=tmp_path / "blobs")
        self.value: Any = None
        registry = ToolRegistry()

        @tool(registry=registry)
        def hostile() -> Any:
            """Returns whatever the test drew."""
            return self.value

        self.llm = ScriptedLlm([])
        app = build_app(
            AgentConfig(name=APP, tools=("hostile",)),
            LocalPrincipals(),
            model=self.llm,
            toolbox=Toolbox(registry=registry),
        )
        self.runner = Runner(
            app=app,
            session_service=self.services.session_service,
            artifact_service=self.services.artifact_service,
        )

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    async def turn(self, sid: str, text: str) -> list[Event]:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return [
            e async for e in self.runner.run_async(user_id="u", session_id=sid, new_message=message)
        ]

    async def round_trip(self, value: Any) -> None:
        """append (a turn) → get → next turn → delete."""
        sessions = self.services.session_service
        self.value = value
        sid = (await sessions.create_session(app_name=APP, user_id="u")).id
        self.llm.extend([call("hostile"), "seen", "again"])
        events = await self.turn(sid, "go")
        assert events[-1].content is not None and events[-1].content.parts
        assert events[-1].content.parts[0].text == "seen"
        stored = await sessions.get_session(app_name=APP, user_id="u", session_id=sid)
        assert stored is not None and len(stored.events) == 4
        (response,) = [r for e in stored.events for r in e.get_function_responses()]
        json.dumps(response.response, allow_nan=False)  # plain JSON: no cycle, no NaN
        await self.turn(sid, "and now?")
        again = await sessions.get_session(app_name=APP, user_id="u", session_id=sid)
        assert again is not None and len(again.events) == 6
        await sessions.delete_session(app_name=APP, user_id="u", session_id=sid)
        assert await sessions.get_session(app_name=APP, user_id="u", session_id=sid) is None

    def close(self) -> None:
        self.run(self.runner.close())
        self.run(self.services.close())
        self.loop.close()


@pytest.fixture
def world(db_url: str, tmp_path: Path) -> Iterator[World]:
    opened = World(db_url, tmp_path)
    try:
        yield opened
    finally:
        opened.close()


@given(VALUES, st.integers(0, 400), st.booleans())
@example([], 200, False)  # json.loads("[" * 200 + "]" * 200)
@example({"x": 1}, 400, False)
@example({}, 0, True)
@example(Huge(5000), 0, False)
@example(b"\xff\xfe\x00", 3, False)
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_any_tool_result_round_trips_through_a_session(
    world: World, base: Any, depth: int, cyclic: bool
) -> None:
    world.run(world.round_trip(shaped(base, depth, cyclic)))


def test_a_deep_result_reaches_the_model_bounded_with_a_note(world: World) -> None:
    world.run(world.round_trip(json.loads("[" * 200 + "]" * 200)))
    shown = world.llm.requests[-2].contents[-1].parts[0].function_response  # type: ignore[index]
    assert shown is not None and shown.response is not None
    assert "nested deeper than" in shown.response["note"]
    text = json.dumps(shown.response["bounded_result"])
    assert CUT_MARK in text and text.replace(CUT_MARK, "").count("[") == MAX_DEPTH


async def deep_event(sessions: Any, sid: str, depth: int) -> Event:
    """A model's function call with arguments `depth` levels deep, appended directly."""
    session = await sessions.get_session(app_name=APP, user_id="u", session_id=sid)
    args = shaped("bottom", depth, False)
    part = types.Part(function_call=types.FunctionCall(name="hostile", args={"a": args}))
    event = Event(
        author=APP, invocation_id="i-1", content=types.Content(role="model", parts=[part])
    )
    await sessions.append_event(session, event)
    return event


def test_a_models_deep_call_is_stored_bounded_and_reads_back(world: World) -> None:
    async def scenario() -> None:
        sessions = world.services.session_service
        sid = (await sessions.create_session(app_name=APP, user_id="u")).id
        event = await deep_event(sessions, sid, 400)
        stored = await sessions.get_session(app_name=APP, user_id="u", session_id=sid)
        assert stored is not None and [e.id for e in stored.events] == [event.id]
        (read,) = stored.events[0].get_function_calls()
        assert CUT_MARK in json.dumps(read.args)
        assert event.get_function_calls()[0].args == {"a": shaped("bottom", 400, False)}

    world.run(scenario())


def test_a_row_stored_too_deep_before_reads_back_and_deletes(world: World) -> None:
    """A row written past the reader's bound (as the store once accepted): every read,
    the next turn and the delete still work."""

    async def scenario() -> None:
        sessions = world.services.session_service
        sid = (await sessions.create_session(app_name=APP, user_id="u")).id
        event = await deep_event(sessions, sid, 10)
        data = event.model_dump_json(exclude_none=True).replace(
            '"a":', '"a":' + "[" * 240 + "1" + "]" * 240 + ',"b":', 1
        )
        async with world.services.store.write() as tx:
            await tx.execute(
                "UPDATE yx_events SET data = :d, fast_codec = NULL WHERE event_id = :e",
                {"d": data, "e": event.id},
            )
        with pytest.raises(ValueError, match="recursion limit"):
            Event.model_validate_json(data)
        stored = await sessions.get_session(app_name=APP, user_id="u", session_id=sid)
        assert stored is not None and stored.events[0].id == event.id
        assert CUT_MARK in json.dumps(stored.events[0].get_function_calls()[0].args)
        world.llm.extend(["fine"])
        assert (await world.turn(sid, "next"))[-1].content is not None
        await sessions.delete_session(app_name=APP, user_id="u", session_id=sid)
        assert await sessions.get_session(app_name=APP, user_id="u", session_id=sid) is None

    world.run(scenario())


def test_state_past_the_bounds_is_stored_bounded_and_reads_back(world: World) -> None:
    """A state delta from any source (a tool writes `tool_context.state`): deep, cyclic,
    or a huge integer is stored marked; a state row stored too deep still reads."""

    async def scenario() -> None:
        sessions = world.services.session_service
        session = await sessions.create_session(app_name=APP, user_id="u")
        cycle: dict[str, Any] = {}
        cycle["me"] = cycle
        delta = {"deep": shaped(1, 1200, False), "cycle": cycle, "huge": -(10**5000)}
        delta |= {"user:deep": shaped(2, 300, False), "app:huge": 10**4500}
        event = Event(author="x", invocation_id="i", actions=EventActions(state_delta=delta))
        await sessions.append_event(session, event)
        stored = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert stored is not None
        assert stored.state["huge"] == stored.state["app:huge"] == f"{CUT_MARK} {INT_REASON}"
        assert stored.state["cycle"] == {"me": f"{CUT_MARK} {CYCLE_REASON}"}
        for key in ("deep", "user:deep"):
            text = json.dumps(stored.state[key]).replace(CUT_MARK, "cut")
            assert "cut" in text and text.count("{") + text.count("[") == MAX_DEPTH - 1
        async with world.services.store.write() as tx:
            await tx.execute(
                "UPDATE yx_sessions SET state = :s WHERE session_id = :i",
                {"s": '{"old": ' + "[" * 1500 + "]" * 1500 + "}", "i": session.id},
            )
        stored = await sessions.get_session(app_name=APP, user_id="u", session_id=session.id)
        assert stored is not None and CUT_MARK in json.dumps(stored.state["old"])
        await sessions.delete_session(app_name=APP, user_id="u", session_id=session.id)

    world.run(scenario())
