"""State deltas keep `dict.update` semantics on every path: the one-statement patch
(session keys, no null or object values), and the merge for everything else."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions

from adk_yuxi.storage import YuxiServices

START = {"keep": "me", "nested": {"a": 1, "b": 2}, "n": 1, "f": 0.1}
DELTAS: list[dict[str, Any]] = [
    {"n": 2, "f": 0.30000000000000004, "s": "\u00e9\n", "l": [1, {"x": None}]},  # patched
    {"n": None},  # null is a value, not a removal
    {"nested": {"a": 5}},  # replaced, not merged
    {'say "hi"': True, "big": 2**70, "tiny": 1e-7},
    {"app:flag": 1, "user:lang": "zh", "mixed": 3},
    {"temp:scratch": 9, "after_temp": 4},
]


@pytest.mark.parametrize("delta", DELTAS)
async def test_a_delta_is_a_dict_update(services: YuxiServices, delta: dict[str, Any]) -> None:
    sessions = services.session_service
    session = await sessions.create_session(app_name="chat", user_id="u", state=dict(START))
    await sessions.append_event(
        session, Event(author="agent", invocation_id="i", actions=EventActions(state_delta=delta))
    )
    expected = {**START, **{k: v for k, v in delta.items() if not k.startswith("temp:")}}
    loaded = await sessions.get_session(app_name="chat", user_id="u", session_id=session.id)
    assert loaded is not None
    assert loaded.state == expected
    assert {k: type(v) for k, v in loaded.state.items()} == {
        k: type(v) for k, v in expected.items()
    }
    # A second delta on top of the first keeps merging.
    await sessions.append_event(
        loaded, Event(author="agent", invocation_id="i", actions=EventActions(state_delta={"n": 7}))
    )
    again = await sessions.get_session(app_name="chat", user_id="u", session_id=session.id)
    assert again is not None and again.state == {**expected, "n": 7}
