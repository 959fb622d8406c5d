"""Floats in session state round-trip on both backends, written whole or as a delta:
PostgreSQL's JSONB prints numbers without exponents, which made 1.5e300 come back as a
301-digit integer."""

from __future__ import annotations

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_yuxi._sql.jsoncodec import dumps
from adk_yuxi.storage import YuxiServices
from tests._profiles import examples

VALUES = {
    "huge": 1.5e300,
    "tiny": 1e-300,
    "e20": 1e20,
    "negative": -2.5e-7,
    "plain": 0.1,
    "big_int": 10**30,
    "text": 'looks like 1e5 and "2e3"',
    "nested": {"list": [1e100, 3, 4.0]},
}


def _types(value: object) -> object:
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


async def test_floats_round_trip_in_state(services: YuxiServices) -> None:
    sessions = services.session_service
    created = await sessions.create_session(
        app_name="chat", user_id="u", state={**VALUES, "user:huge": 1.5e300}
    )
    event = Event(author="user", invocation_id="i", actions=EventActions(state_delta={
        "delta_huge": 7.25e250, "app:tiny": 5e-324,
    }))  # fmt: skip
    await sessions.append_event(created, event)
    loaded = await sessions.get_session(app_name="chat", user_id="u", session_id=created.id)
    assert loaded is not None
    expected = {**VALUES, "user:huge": 1.5e300, "delta_huge": 7.25e250, "app:tiny": 5e-324}
    assert loaded.state == expected
    assert _types(loaded.state) == _types(expected)


@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers() | st.text(max_size=10))
@settings(max_examples=examples(300), deadline=None)
def test_dumps_keeps_every_value(value: object) -> None:
    import json

    back = json.loads(dumps({"v": value, "s": [value, "1e5"]}))
    assert back == {"v": value, "s": [value, "1e5"]}
    assert type(back["v"]) is type(value)
