"""Waiting points and the ledger's duplicate check with runs reading their session
through a window (`SessionWindow`, as the host's runs do) after a compaction summary."""

from __future__ import annotations

from google.adk.agents.run_config import RunConfig
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.genai import types

from adk_yuxi.ledger import AnswerAlreadyResumed, resume_waitpoint
from adk_yuxi.sessions import SessionWindow
from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import call

from ._harness import APP, USER, make_runner, user_text
from .test_ask_user_question import COLOUR, echo_answer
from .test_resumes import refusal

WINDOW = RunConfig(get_session_config=SessionWindow())


async def summarize_all_but_last(services: YuxiServices, session_id: str, keep: int) -> int:
    """Appends a summary of all but the last `keep` events, through a windowed read (as
    ADK's compaction would); returns how many events a windowed read then holds."""
    sessions = services.session_service
    session = await sessions.get_session(
        app_name=APP, user_id=USER, session_id=session_id, config=SessionWindow()
    )
    assert session is not None and len(session.events) > keep
    covered = session.events[:-keep]
    compaction = EventCompaction(
        start_timestamp=covered[0].timestamp,
        end_timestamp=covered[-1].timestamp,
        compacted_content=types.Content(role="model", parts=[types.Part(text="earlier")]),
    )
    await sessions.append_event(
        session,
        Event(author="user", invocation_id="summary", actions=EventActions(compaction=compaction)),
    )
    window = await sessions.get_session(
        app_name=APP, user_id=USER, session_id=session_id, config=SessionWindow()
    )
    assert window is not None
    return len(window.events)


async def test_a_late_duplicate_is_refused_through_the_window(services: YuxiServices) -> None:
    runner, llm, plugin = make_runner(
        services,
        [
            "first turn answered",
            call("ask_user_question", questions=[COLOUR]),
            call("ask_user_question", questions=[{**COLOUR, "question_id": "colour2"}]),
            echo_answer,
        ],
    )
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    for text in ("hello", "pick a colour"):
        async for _ in runner.run_async(
            user_id=USER, session_id=session.id, new_message=user_text(text), run_config=WINDOW
        ):
            pass
    (first,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    answered = await plugin.waitpoints.answer(first.id, {"colour": "red"}, user_id=USER)
    [_ async for _ in resume_waitpoint(runner, answered, run_config=WINDOW)]
    (second,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    full = await services.session_service.get_session(
        app_name=APP, user_id=USER, session_id=session.id
    )
    assert full is not None
    # The first turn is covered; the paused run stays whole in the window.
    held = await summarize_all_but_last(services, session.id, keep=2)
    assert held < len(full.events) + 1
    refused = await refusal(resume_waitpoint(runner, answered, run_config=WINDOW))
    assert isinstance(refused, AnswerAlreadyResumed)
    again = await plugin.waitpoints.answer(second.id, {"colour2": "blue"}, user_id=USER)
    events = [e async for e in resume_waitpoint(runner, again, run_config=WINDOW)]
    assert events[-1].content is not None
    assert events[-1].content.parts[0].text.startswith("got")
    assert len(llm.requests) == 4
