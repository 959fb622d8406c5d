"""ask_user_question through the real Runner: pause, list, answer, cancel, resume."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_yuxi.storage import YuxiServices, open_services
from adk_yuxi.testing import call
from adk_yuxi.waitpoints import (
    REQUEST_INPUT,
    AnswerRejected,
    StoredQuestionsInvalid,
    WaitpointConflict,
    WaitpointNotFound,
)

from ._harness import APP, USER, make_runner, pending_calls, responses, run, user_text

COLOUR = {
    "question": "Which colour?",
    "question_id": "colour",
    "options": [{"label": "Red", "value": "red"}, {"label": "Blue", "value": "blue"}],
}
NAME = {"question": "Your name?"}


def echo_answer(request: LlmRequest) -> str:
    """A model turn that repeats the tool result it was given."""
    for content in reversed(request.contents):
        for part in content.parts or []:
            if part.function_response is not None:
                return "got " + json.dumps(part.function_response.response, sort_keys=True)
    return "no result"


async def ask(services: YuxiServices, questions: list[dict[str, Any]], *more: Any):
    runner, llm, plugin = make_runner(
        services, [call("ask_user_question", questions=questions), echo_answer, *more]
    )
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    events = await run(runner, session.id, user_text("hello"))
    return runner, llm, plugin, session, events


async def run_status(plugin: Any, session_id: str) -> list[str]:
    async with plugin.store.read() as tx:
        rows = await tx.fetchall(
            "SELECT status FROM yx_runs WHERE session_id = :s", {"s": session_id}
        )
    return [r[0] for r in rows]


async def test_pause_answer_resume(services: YuxiServices) -> None:
    runner, llm, plugin, session, events = await ask(services, [COLOUR, NAME])
    (pending,) = pending_calls(events)
    assert pending.name == REQUEST_INPUT
    page = await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)
    (point,) = page.items
    assert point.id == pending.id and point.status == "pending"
    assert [q["question_id"] for q in point.questions] == ["colour", "q-2"]
    assert await run_status(plugin, session.id) == ["waiting"]
    assert len(llm.requests) == 1

    answered = await plugin.waitpoints.answer(
        point.id, {"colour": "blue", "q-2": " Ann "}, user_id=USER
    )
    assert answered.answers == {"colour": "blue", "q-2": "Ann"}
    events = await run(runner, session.id, answered.resume_message())
    (result,) = responses(events, "ask_user_question")
    assert result["answers"] == {"colour": "blue", "q-2": "Ann"}
    assert [q["question_id"] for q in result["questions"]] == ["colour", "q-2"]
    assert llm.requests[-1].contents[-1].parts[0].function_response.response == result
    assert await run_status(plugin, session.id) == ["completed"]
    assert (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items == []
    await runner.close()


async def test_rejected_answer_changes_nothing_and_second_answer_conflicts(
    services: YuxiServices,
) -> None:
    runner, _, plugin, _, _ = await ask(services, [COLOUR])
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    for bad in ({"colour": "green"}, {"colour": ["red"]}, {}, {"colour": "red", "x": "y"}):
        with pytest.raises(AnswerRejected):
            await plugin.waitpoints.answer(point.id, bad, user_id=USER)
        assert (await plugin.waitpoints.get(point.id, user_id=USER)).status == "pending"
    with pytest.raises(WaitpointNotFound):
        await plugin.waitpoints.answer(point.id, {"colour": "red"}, user_id="mallory")
    await plugin.waitpoints.answer(point.id, {"colour": "red"}, user_id=USER)
    with pytest.raises(WaitpointConflict) as conflict:
        await plugin.waitpoints.answer(point.id, {"colour": "blue"}, user_id=USER)
    assert conflict.value.status == "answered"
    assert (await plugin.waitpoints.get(point.id, user_id=USER)).answers == {"colour": "red"}
    with pytest.raises(WaitpointConflict):
        await plugin.waitpoints.cancel(point.id, user_id=USER)
    await runner.close()


async def test_an_answer_with_a_lone_surrogate_is_rejected_and_the_run_resumes_later(
    services: YuxiServices,
) -> None:
    """What a JSON "\\ud800" escape decodes to is not text any store can hold: refused
    as an answer (the point stays pending), so a later valid answer still resumes."""
    runner, _, plugin, session, _ = await ask(services, [COLOUR, NAME])
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    lone = json.loads('"Ann \\ud800"')
    for bad in (
        {"colour": "red", "q-2": lone},
        {"colour": {"other": lone}, "q-2": "Ann"},
        {"colour": [lone], "q-2": "Ann"},
        {"colour": "red", "q-2": "Ann", lone: "x"},
    ):
        with pytest.raises(AnswerRejected) as rejected:
            await plugin.waitpoints.answer(point.id, bad, user_id=USER)
        # The problem list is valid text (a lone surrogate key is not echoed as one).
        json.dumps(rejected.value.to_dict(), ensure_ascii=False).encode("utf-8")
        assert any(
            "surrogate" in p["problem"] or p["problem"] == "no such question"
            for p in rejected.value.problems
        )
        assert (await plugin.waitpoints.get(point.id, user_id=USER)).status == "pending"
    answered = await plugin.waitpoints.answer(
        point.id, {"colour": "red", "q-2": "Ann"}, user_id=USER
    )
    events = await run(runner, session.id, answered.resume_message())
    assert responses(events, "ask_user_question")[0]["answers"]["q-2"] == "Ann"
    assert await run_status(plugin, session.id) == ["completed"]
    await runner.close()


async def test_two_concurrent_answers_exactly_one_wins(services: YuxiServices, db_url: str) -> None:
    runner, _, plugin, _, _ = await ask(services, [COLOUR])
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    # Two hosts: each its own engine and connections on the same database.
    async with open_services(db_url) as one, open_services(db_url) as two:
        from adk_yuxi.waitpoints import WaitpointStore

        results = await asyncio.gather(
            WaitpointStore(one.store).answer(point.id, {"colour": "red"}, user_id=USER),
            WaitpointStore(two.store).answer(point.id, {"colour": "blue"}, user_id=USER),
            return_exceptions=True,
        )
    won = [r for r in results if not isinstance(r, BaseException)]
    lost = [r for r in results if isinstance(r, BaseException)]
    assert len(won) == 1 and len(lost) == 1
    assert isinstance(lost[0], WaitpointConflict)
    stored = await plugin.waitpoints.get(point.id, user_id=USER)
    assert stored.answers == won[0].answers
    await runner.close()


async def test_an_answer_racing_the_delete_of_its_session_is_not_found(
    services: YuxiServices, db_url: str
) -> None:
    """The answer reads the point, then its write waits behind a delete of the session
    (a lock held by another engine) and changes nothing: `WaitpointNotFound`, as a
    later answer gets, not a crash (seen under the exactly-once soak, seed 15)."""
    runner, _, plugin, session, _ = await ask(services, [COLOUR])
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    async with open_services(db_url) as other:
        async with other.store.write() as tx:
            await plugin.waitpoints.forget_session(
                tx, app_name=APP, user_id=USER, session_id=session.id
            )
            answering = asyncio.ensure_future(
                plugin.waitpoints.answer(point.id, {"colour": "red"}, user_id=USER)
            )
            await asyncio.sleep(0.5)  # it has read the point and waits to write
            assert not answering.done()
        with pytest.raises(WaitpointNotFound):
            await answering
    with pytest.raises(WaitpointNotFound):
        await plugin.waitpoints.answer(point.id, {"colour": "red"}, user_id=USER)
    await runner.close()


async def test_cancel_resumes_with_cancelled(services: YuxiServices) -> None:
    runner, _, plugin, session, _ = await ask(services, [COLOUR])
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    cancelled = await plugin.waitpoints.cancel(point.id, user_id=USER)
    with pytest.raises(WaitpointConflict):
        await plugin.waitpoints.answer(point.id, {"colour": "red"}, user_id=USER)
    events = await run(runner, session.id, cancelled.resume_message())
    (result,) = responses(events, "ask_user_question")
    assert result["cancelled"] is True and "answers" not in result
    await runner.close()


def direct(point_id: str, response: dict[str, Any]) -> types.Content:
    """What `adk run`'s prompt or `adk web` sends: a response straight to the call."""
    fr = types.FunctionResponse(id=point_id, name=REQUEST_INPUT, response=response)
    return types.Content(role="user", parts=[types.Part(function_response=fr)])


async def test_direct_answer_is_validated_and_recorded(services: YuxiServices) -> None:
    runner, llm, plugin, session, _ = await ask(services, [COLOUR])
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    # A value outside the options: asked again at the same point, still pending.
    events = await run(runner, session.id, direct(point.id, {"result": "green"}))
    (again,) = pending_calls(events)
    assert again.id == point.id
    assert "not among the options" in again.args["message"]
    assert (await plugin.waitpoints.get(point.id, user_id=USER)).status == "pending"
    assert len(llm.requests) == 1
    # adk run wraps a plain line as {"result": line}.
    events = await run(runner, session.id, direct(point.id, {"result": "blue"}))
    (result,) = responses(events, "ask_user_question")
    assert result["answers"] == {"colour": "blue"}
    assert (await plugin.waitpoints.get(point.id, user_id=USER)).answers == {"colour": "blue"}
    await runner.close()


async def test_stored_questions_that_no_longer_validate_fail_clearly(
    services: YuxiServices,
) -> None:
    runner, _, plugin, session, _ = await ask(services, [COLOUR], "after the error")
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    async with plugin.store.write() as tx:
        await tx.execute(
            "UPDATE yx_waitpoints SET questions_schema = 99 WHERE id = :i", {"i": point.id}
        )
    with pytest.raises(StoredQuestionsInvalid):
        await plugin.waitpoints.answer(point.id, {"colour": "red"}, user_id=USER)
    events = await run(runner, session.id, direct(point.id, {"colour": "red"}))
    (result,) = responses(events, "ask_user_question")
    assert result["error"]["code"] == "tool_failed"
    # The resumed run went on to its end: its point is withdrawn, not left to answer.
    assert (await plugin.waitpoints.get(point.id, user_id=USER)).status == "cancelled"
    await runner.close()


async def test_invalid_arguments_open_no_waiting_point(services: YuxiServices) -> None:
    runner, _llm, plugin = make_runner(
        services, [call("ask_user_question", questions=json.dumps([COLOUR])), "sorry"]
    )
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    events = await run(runner, session.id, user_text("hello"))
    (result,) = responses(events, "ask_user_question")
    assert result["error"]["code"] == "invalid_arguments"
    assert pending_calls(events) == []
    async with plugin.store.read() as tx:
        assert await tx.fetchall("SELECT id FROM yx_waitpoints") == []
    assert await run_status(plugin, session.id) == ["completed"]
    await runner.close()


async def test_pending_points_page_by_user_and_session(services: YuxiServices) -> None:
    sessions = []
    for _ in range(3):
        runner, _, plugin, session, _ = await ask(services, [COLOUR])
        sessions.append(session.id)
        await runner.close()
    seen, token = [], None
    while True:
        page = await plugin.waitpoints.list_pending(
            app_name=APP, user_id=USER, page_size=2, page_token=token
        )
        seen += page.items
        token = page.next_page_token
        if token is None:
            break
    assert sorted(p.session_id for p in seen) == sorted(sessions)
    one = await plugin.waitpoints.list_pending(app_name=APP, user_id=USER, session_id=sessions[1])
    assert [p.session_id for p in one.items] == [sessions[1]]
    other = await plugin.waitpoints.list_pending(app_name=APP, user_id="bob")
    assert other.items == []


TOPPINGS = {
    "question": "Toppings?",
    "question_id": "top",
    "multi_select": True,
    "options": [{"label": "Ham", "value": "ham"}, {"label": "Olives", "value": "olives"}],
}


@pytest.mark.parametrize(
    ("questions", "typed", "answers"),
    [
        # adk run / adk web wrap a typed line as {"result": line}; ADK parses JSON in it.
        ([NAME], {"result": 42}, {"q-1": "42"}),
        ([NAME], {"result": "  Ann  "}, {"q-1": "Ann"}),
        ([TOPPINGS], {"result": "ham, olives"}, {"top": ["ham", "olives"]}),
        ([TOPPINGS], {"result": ["olives"]}, {"top": ["olives"]}),
        ([COLOUR], {"result": {"other": "teal"}}, {"colour": {"other": "teal"}}),
        ([COLOUR, TOPPINGS], {"colour": "red", "top": "ham"}, {"colour": "red", "top": ["ham"]}),
    ],
)
async def test_answers_typed_at_a_prompt(
    services: YuxiServices,
    questions: list[dict[str, Any]],
    typed: dict[str, Any],
    answers: dict[str, Any],
) -> None:
    runner, _, plugin, session, _ = await ask(services, questions)
    (point,) = (await plugin.waitpoints.list_pending(app_name=APP, user_id=USER)).items
    events = await run(runner, session.id, direct(point.id, typed))
    (result,) = responses(events, "ask_user_question")
    assert result["answers"] == answers
    await runner.close()


async def test_storage_failure_opens_nothing_and_the_run_goes_on(services: YuxiServices) -> None:
    runner, _, _ = make_runner(services, [call("ask_user_question", questions=[COLOUR]), "ok"])
    session = await services.session_service.create_session(app_name=APP, user_id=USER)
    await services.store.write_one("ALTER TABLE yx_waitpoints RENAME TO yx_waitpoints_away")
    try:
        events = await run(runner, session.id, user_text("hello"))
    finally:
        await services.store.write_one("ALTER TABLE yx_waitpoints_away RENAME TO yx_waitpoints")
    (result,) = responses(events, "ask_user_question")
    assert result["error"]["code"] == "tool_failed"
    assert pending_calls(events) == [] and events[-1].content.parts[0].text == "ok"
    await runner.close()
