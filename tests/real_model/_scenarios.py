"""The conversations the real-model check holds: the shipped agents, the `yuxi create`
template under `adk run`, and one long conversation that outgrows the model's context."""

from __future__ import annotations

import asyncio
import importlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from google.adk.apps import App
from google.adk.artifacts import InMemoryArtifactService
from google.adk.events import Event
from google.adk.memory import InMemoryMemoryService
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import BaseSessionService
from google.genai import types

from adk_yuxi.models import OpenAICompatibleLlm, ReactLlm, resolve_model
from adk_yuxi.runtime import AgentConfig, Limits, LocalPrincipals, build_app
from adk_yuxi.sessions import SqlSessionService

from ._forced import forced_model
from ._guarantees import Turn, Verdict

ROOT = Path(__file__).resolve().parents[2]
USER = "checker"
TURN_SECONDS = float(os.environ.get("YUXI_REAL_MODEL_TURN_SECONDS", 900))
"""A turn still running then counts as wedged."""

SHIPPED: dict[str, list[str]] = {
    "agents.assistant.agent": [
        "Hello! What can you do?",
        "What is 17 * 23? Use the calculator.",
        "Please remember that the report is due on Friday.",
        "calculate :{",
    ],
    "agents.skilled.agent": [
        "What is 12 + 30?",
        "Save a note for me: buy milk.",
        "What are my notes?",
    ],
    "agents.team.agent": ["Draft two lines about the weekly team meeting."],
}
TEMPLATE = ["what is 6 * 7?", "count the words in: one two three", "remember the demo works"]


def cap_replies(agent: Any, tokens: int) -> None:
    """Replies of at most `tokens`: a small model may ramble to its 4,096-token default."""
    model: Any = getattr(agent, "model", None)
    if isinstance(model, ReactLlm):
        model = model.inner
    if isinstance(model, OpenAICompatibleLlm):
        model.max_tokens = tokens
    for sub in agent.sub_agents:
        cap_replies(sub, tokens)


async def converse(
    verdict: Verdict,
    scenario: str,
    app: App,
    messages: list[str],
    sessions: BaseSessionService | None = None,
) -> None:
    sessions = sessions or InMemorySessionService()
    runner = Runner(
        app=app,
        session_service=sessions,
        memory_service=InMemoryMemoryService(),
        artifact_service=InMemoryArtifactService(),
    )
    session = await sessions.create_session(app_name=app.name, user_id=USER)
    print(f"{scenario}: {len(messages)} turns", flush=True)
    try:
        for message in messages:
            content = types.Content(role="user", parts=[types.Part(text=message)])
            started = time.monotonic()
            events: list[Event] = []

            async def turn(content: types.Content = content, events: list[Event] = events) -> None:
                async for event in runner.run_async(
                    user_id=USER, session_id=session.id, new_message=content
                ):
                    events.append(event)

            try:
                await asyncio.wait_for(turn(), TURN_SECONDS)
            except TimeoutError:
                verdict.problems.append(f"{scenario}: a turn ran past {TURN_SECONDS} s")
            verdict.add_turn(Turn.of(scenario, message, time.monotonic() - started, events))
    finally:
        await runner.close()
    stored = await sessions.get_session(app_name=app.name, user_id=USER, session_id=session.id)
    assert stored is not None
    verdict.check_session(scenario, stored.events)


async def shipped_agents(verdict: Verdict, max_tokens: int) -> None:
    for module_name, messages in SHIPPED.items():
        app = importlib.import_module(module_name).app
        cap_replies(app.root_agent, max_tokens)
        await converse(verdict, module_name.split(".")[1], app, messages)


def long_messages(turns: int) -> list[str]:
    said = []
    for i in range(turns):
        if i % 5 == 3:
            said.append(f"What is {i} * 37? Use the calculator.")
        elif i % 7 == 6:
            said.append("calculate :{")
        else:
            detail = " ".join(f"item {i}.{k} costs {k * 3 + i} euros;" for k in range(24))
            said.append(f"Note {i} for the inventory: {detail} please keep it in mind.")
    return said


async def long_conversation(verdict: Verdict, turns: int, max_tokens: int, db: Path) -> None:
    """One session past the model's context, tools through the API: tool loops stopped,
    the overflow retry (the context is learned from the refusal), compaction, no wedge."""
    config = AgentConfig(
        name="long_talk",
        instruction="Answer in one short sentence. Use calculate for arithmetic.",
        tools=("calculate", "save_note", "list_notes"),
        limits=Limits(max_llm_calls=4),
    )
    model = resolve_model(os.environ.get("YUXI_REAL_MODEL_NATIVE"))
    app = build_app(config, LocalPrincipals(()), model=model)
    cap_replies(app.root_agent, max_tokens)
    async with SqlSessionService(f"sqlite+aiosqlite:///{db}") as sessions:
        await converse(verdict, "long_talk", app, long_messages(turns), sessions)


LOOP = ["calculate :{", "What is 6 * 7?"]


async def forced_tool_loop(verdict: Verdict, max_tokens: int) -> None:
    """Every step must call `calculate` (a named `tool_choice`): the model cannot answer
    in text, so each turn goes on until a loop guard or the call limit stops it."""
    config = AgentConfig(
        name="looper",
        instruction="Use calculate for arithmetic.",
        tools=("calculate",),
        limits=Limits(max_llm_calls=12),
    )
    importlib.import_module("adk_yuxi.tools.builtin.calculator")  # registers `calculate`
    base_url = os.environ["OPENAI_BASE_URL"]
    name = os.environ.get("YUXI_REAL_MODEL_NATIVE", "openai/default").removeprefix("openai/")
    model = forced_model(name, base_url, os.environ.get("OPENAI_API_KEY", "local"), "calculate")
    app = build_app(config, LocalPrincipals(()), model=model)
    cap_replies(app.root_agent, max_tokens)
    await converse(verdict, "forced_tool_loop", app, LOOP)


def template_in_adk_run(verdict: Verdict, work: Path) -> None:
    """`yuxi create helper`, then `adk run helper`: every message gets a printed answer."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ADK_DISABLE_LOAD_DOTENV": "1"}
    binaries = Path(sys.executable).parent
    subprocess.run([str(binaries / "yuxi"), "create", "helper"], cwd=work, env=env, check=True)
    print(f"template (adk run): {len(TEMPLATE)} turns", flush=True)
    started = time.monotonic()
    done = subprocess.run(
        [str(binaries / "adk"), "run", "helper"],
        input="\n".join([*TEMPLATE, "exit"]) + "\n",
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=1800,
        check=False,
    )
    seconds = (time.monotonic() - started) / len(TEMPLATE)
    answers = done.stdout.split("[user]: ")[1:]
    if done.returncode != 0 or "Traceback" in done.stdout + done.stderr:
        verdict.problems.append(f"template: adk run failed: {done.stderr[-400:]}")
    for message, answer in zip(TEMPLATE, answers + [""] * len(TEMPLATE), strict=False):
        _, _, shown = answer.partition("[helper]: ")
        code = shown[1 : shown.find("]")] if shown.startswith("[MODEL_") else None
        verdict.add_turn(Turn("template", message, seconds, shown.strip(), code, 0, 0))
