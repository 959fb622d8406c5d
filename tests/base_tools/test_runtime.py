"""The base tools on an agent assembled by `build_app`: declared whatever the config
selects, permitted by the authorization plugin, acting through the ledger `RunRecords`
adds, with marks re-checking the rights the access database holds; without records,
the tools that need them are not shown at all."""

from __future__ import annotations

from pathlib import Path

from google.adk.runners import InMemoryRunner, Runner

from adk_yuxi import AgentConfig, LocalPrincipals, RunRecords, Toolbox, build_app
from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig, User
from adk_yuxi.storage import YuxiServices
from adk_yuxi.testing import ScriptedLlm, call
from adk_yuxi.tools.base import BASE_TOOLS
from adk_yuxi.waitpoints import WaitpointStore

from ._harness import USER, pending_calls, responses, run, user_text


async def test_every_assembled_agent_carries_the_base_tools(
    services: YuxiServices, tmp_path: Path
) -> None:
    access = AccessRepository(services.store)
    await access.save_user(User(id=USER))
    await access.save_resource(
        ResourceRecord(
            kind=ResourceKind.AGENT, id="helper", creator_id=USER, share=ShareConfig.public()
        )
    )
    (tmp_path / USER).mkdir()
    (tmp_path / USER / "notes.txt").write_text("hello")
    llm = ScriptedLlm(
        [
            call("mark_for_improvement", reason="the user asked for a format I lack"),
            call("present_artifacts", filepaths=["/workspace/notes.txt"]),
            call("ask_user_question", questions=[{"question": "Anything else?"}]),
            "thanks",
        ]
    )
    app = build_app(
        AgentConfig(name="helper", tools=()),
        access,
        model=llm,
        toolbox=Toolbox(workspace=tmp_path / USER),
        capabilities=[RunRecords(services.store)],
    )
    runner = Runner(
        app=app,
        session_service=services.session_service,
        artifact_service=services.artifact_service,
    )
    session = await services.session_service.create_session(app_name="helper", user_id=USER)
    events = await run(runner, session.id, user_text("hi"))
    assert set(BASE_TOOLS) <= set(llm.tool_names(0))
    (mark,) = responses(events, "mark_for_improvement")
    assert mark["saved"] is True
    (shown,) = responses(events, "present_artifacts")
    assert shown["artifacts"][0]["name"] == "notes.txt"
    (pending,) = pending_calls(events)
    point = await WaitpointStore(services.store).answer(pending.id, {"q-1": "no"}, user_id=USER)
    events = await run(runner, session.id, point.resume_message())
    assert responses(events, "ask_user_question")[0]["answers"] == {"q-1": "no"}
    assert events[-1].content.parts[0].text == "thanks"
    async with services.store.read() as tx:
        rows = await tx.fetchall("SELECT status FROM yx_runs")
    assert [r[0] for r in rows] == ["completed"]
    await runner.close()


async def test_without_records_the_tools_that_need_them_are_not_shown() -> None:
    """Shown and answering `tool_not_available` would waste the model's calls: a tool
    no capability serves is not declared, and a call to one is refused as unknown."""
    llm = ScriptedLlm([call("ask_user_question", questions=[{"question": "Sure?"}]), "done"])
    app = build_app(AgentConfig(name="helper", tools=()), LocalPrincipals(), model=llm)
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name="helper", user_id=USER)
    events = await run(runner, session.id, user_text("hi"))
    assert set(llm.tool_names(0)) == {"read_tool_result"}
    (refused,) = responses(events, "ask_user_question")
    assert refused["error"]["code"] == "tool_not_available"
    assert pending_calls(events) == []
    await runner.close()
