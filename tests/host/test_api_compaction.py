"""Compaction through the host API, on the demo model and a real SQLite database: a
long conversation gets summary events, every run still ends with its answer and its
status, and the first turn is still answered after several compactions."""

from __future__ import annotations

from pathlib import Path

import httpx

from adk_yuxi.host import ApiConfig, create_app
from adk_yuxi.models import DemoLlm
from adk_yuxi.runtime import AgentConfig, ContextPolicy
from adk_yuxi.sessions import SqlSessionService

from .conftest import Api, new_session, run, seed

PLANNER = AgentConfig(
    name="planner",
    description="Plans with the user.",
    tools=(),
    context=ContextPolicy(budget_tokens=1000, keep_recent_events=2),
)


async def test_a_long_conversation_is_compacted_and_recalls_its_first_turn(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'api.db'}"
    tokens = await seed(url)
    config = ApiConfig(
        database_url=url,
        agents=(PLANNER,),
        workspace_root=tmp_path / "workspaces",
        model=DemoLlm(),
        worker="test-worker",
    )
    app = create_app(config)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            api = Api(client=client, llm=None, url=url, tokens=tokens)  # type: ignore[arg-type]
            session = await new_session(api, "mei")
            said = ["My locker code is 4711."]
            said += [f"Fact {i}: meeting room {i} is on floor {i % 5}." for i in range(28)]
            for text in said:
                frames = await run(api, "mei", session, text)
                assert frames[-1]["event"] == "run_status"
                assert frames[-1]["data"]["status"] == "completed", frames[-1]
            frames = await run(api, "mei", session, "What did I tell you about my locker code?")
    texts = [
        part.get("text", "")
        for frame in frames
        if frame.get("event") == "adk_event"
        for part in (frame["data"].get("content") or {}).get("parts", [])
    ]
    assert any("4711" in t and "summary" in t for t in texts), frames
    async with SqlSessionService(url) as sessions:
        stored = await sessions.get_session(app_name="planner", user_id="mei", session_id=session)
    assert stored is not None
    summaries = [e for e in stored.events if e.actions.compaction is not None]
    assert len(summaries) >= 3
    users = [e.content.parts for e in stored.events if e.author == "user" and e.content]
    assert [parts[0].text for parts in users if parts][: len(said)] == said  # nothing lost
