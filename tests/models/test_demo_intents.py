"""The demo model on the shipped assistant's services: memory, artifacts, uploads, and
hints that name the skill opening a hidden tool. Everything goes through the Runner."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.artifacts import InMemoryArtifactService
from google.adk.memory import InMemoryMemoryService
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

import adk_yuxi.tools.builtin  # noqa: F401
from adk_yuxi.access import ResourceKind, ResourceRecord, ShareConfig
from adk_yuxi.demo.assistant import app as assistant_app
from adk_yuxi.mcp import McpServerRegistry
from adk_yuxi.models import DemoLlm
from adk_yuxi.runtime import AgentConfig, LocalPrincipals, Toolbox, build_app
from adk_yuxi.skills import SkillCatalog
from adk_yuxi.skills.builtin import BUILTIN_SKILLS_DIR
from adk_yuxi.tools import default_registry
from tests.conftest import final_texts, function_responses, run_turn, user_message


class Chat:
    def __init__(self, runner: Runner, session_id: str) -> None:
        self.runner = runner
        self.session_id = session_id

    async def say(self, message: types.Content | str) -> list:  # type: ignore[type-arg]
        content = user_message(message) if isinstance(message, str) else message
        return [
            e
            async for e in self.runner.run_async(
                user_id="u", session_id=self.session_id, new_message=content
            )
        ]


async def open_chat(runner: Runner, app_name: str) -> Chat:
    session = await runner.session_service.create_session(app_name=app_name, user_id="u")
    return Chat(runner, session.id)


def assistant_runner() -> Runner:
    return Runner(
        app=assistant_app,
        session_service=InMemorySessionService(),
        memory_service=InMemoryMemoryService(),
        artifact_service=InMemoryArtifactService(),
    )


async def test_finished_turns_reach_memory_and_load_memory_finds_them() -> None:
    runner = assistant_runner()
    first = await open_chat(runner, "assistant")
    await first.say("remember the launch is on Friday")
    later = await open_chat(runner, "assistant")
    events = await later.say("search my memory for launch")
    [response] = function_responses(events)
    assert response.name == "load_memory"
    assert "From past conversations: 'remember the launch is on Friday'" in final_texts(events)[-1]
    await runner.close()


async def test_generated_and_uploaded_files_become_artifacts() -> None:
    runner = assistant_runner()
    chat = await open_chat(runner, "assistant")
    events = await chat.say("write file report.md with # Weekly report")
    [response] = function_responses(events)
    assert response.response == {
        "saved": "report.md",
        "version": 0,
        "mime_type": "text/markdown",
        "bytes": 15,
    }
    upload = types.Content(
        role="user",
        parts=[
            types.Part(text="here is the plan"),
            types.Part(
                inline_data=types.Blob(
                    data=b"a,b\n1,2\n", mime_type="text/csv", display_name="plan.csv"
                )
            ),
        ],
    )
    events = await chat.say(upload)
    assert "I received 'plan.csv'. It is saved as an artifact" in final_texts(events)[-1]
    artifacts = runner.artifact_service
    assert artifacts is not None
    keys = await artifacts.list_artifact_keys(
        app_name="assistant", user_id="u", session_id=chat.session_id
    )
    assert sorted(keys) == ["plan.csv", "report.md"]
    saved = await artifacts.load_artifact(
        app_name="assistant", user_id="u", session_id=chat.session_id, filename="report.md"
    )
    assert saved is not None and saved.inline_data is not None
    assert saved.inline_data.data == b"# Weekly report"
    await runner.close()


async def test_a_bad_file_name_is_refused_before_anything_is_saved() -> None:
    runner = assistant_runner()
    chat = await open_chat(runner, "assistant")
    for name in ("../etc/passwd", ".hidden", "a/b.txt", "spaced name.txt"):
        events = await chat.say(f'/call save_text_file {{"filename": "{name}", "text": "x"}}')
        [response] = function_responses(events)
        assert "error" in (response.response or {}), (name, response.response)
    assert runner.artifact_service is not None
    keys = await runner.artifact_service.list_artifact_keys(
        app_name="assistant", user_id="u", session_id=chat.session_id
    )
    assert keys == []
    await runner.close()


async def test_skill_hint_names_the_skill_and_disappears_once_loaded() -> None:
    skills = SkillCatalog(default_registry, McpServerRegistry())
    skills.load_dir(BUILTIN_SKILLS_DIR)
    users = LocalPrincipals(
        ResourceRecord(
            kind=ResourceKind.SKILL, id=s.name, creator_id="x", share=ShareConfig.public()
        )
        for s in skills.all()
    )
    config = AgentConfig(name="skilled", tools=(), preload_skills=("exact-arithmetic",))
    app = build_app(config, users, model=DemoLlm(), toolbox=Toolbox(skills=skills))
    runner = Runner(app=app, session_service=InMemorySessionService())
    chat = await open_chat(runner, "skilled")
    before = await chat.say("remember buy milk")
    assert function_responses(before) == []
    assert "it opens when the skill 'note-keeping' is loaded" in final_texts(before)[-1]
    await chat.say('/call load_skill {"skill_name": "note-keeping"}')
    after = await chat.say("remember buy milk")
    assert [r.name for r in function_responses(after)] == ["save_note"]
    await runner.close()


async def test_help_lists_visible_tools() -> None:
    events = await run_turn(
        LlmAgent(name="a", model=DemoLlm(), tools=default_registry.tools(["calculate"])), "hi"
    )
    assert "Tools I can see: calculate." in final_texts(events)[-1]
