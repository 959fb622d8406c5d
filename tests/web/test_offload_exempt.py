"""web_fetch pages its own result, so the offload plugin leaves it whole: a page window
above the offload threshold reaches the model as the tool gave it, while a local tool's
result of the same size in the same run is stored (real Runner, SQLite, loopback page)."""

from __future__ import annotations

from pathlib import Path

from google.adk.runners import Runner
from google.genai import types

from adk_yuxi.runtime import AgentConfig, Toolbox, build_app
from adk_yuxi.storage import open_services
from adk_yuxi.testing import PageServer, ScriptedLlm, call
from adk_yuxi.tools import ToolSettings, register_tool
from adk_yuxi.web import WebSettings, bind_web_fetch, web_fetch_tool

from ..runtime._kit import USER, Kit, function_responses

PAGE = (
    "<html><head><title>Long</title></head><body>"
    + "".join(f"<p>Paragraph {i} of the long page.</p>" for i in range(1200))
    + "</body></html>"
).encode()


async def test_web_fetch_is_not_offloaded_but_a_local_result_is(tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    register_tool(web_fetch_tool(None), registry=kit.registry, binder=bind_web_fetch)
    settings = WebSettings(fetch_provider="direct", unsafe_fetch_allow_networks=("127.0.0.1/32",))
    services = open_services(f"sqlite+aiosqlite:///{tmp_path / 'y.db'}", blob_dir=tmp_path / "b")
    with PageServer({"/long": ("text/html", PAGE)}) as pages:
        llm = ScriptedLlm(
            [call("web_fetch", url=pages.url("/long")), call("echo", text="x" * 20_000), "done"]
        )
        app = build_app(
            AgentConfig(name="researcher", tools=("web_fetch", "echo"), skills=()),
            kit.principal(),
            model=llm,
            toolbox=Toolbox(
                registry=kit.registry,
                skills=kit.catalog,
                settings=ToolSettings(settings, environ={}),
            ),
        )
        runner = Runner(
            app=app,
            session_service=services.session_service,
            artifact_service=services.artifact_service,
        )
        session = await services.session_service.create_session(app_name=app.name, user_id=USER)
        message = types.Content(role="user", parts=[types.Part(text="read it")])
        run = runner.run_async(user_id=USER, session_id=session.id, new_message=message)
        events = [e async for e in run]
        await runner.close()
    found = function_responses(events)
    (page,) = found["web_fetch"]
    assert page["truncated"] is True and len(page["content"].encode()) > 16 * 1024
    assert "stored_result" not in page
    (echo,) = found["echo"]
    assert echo["stored_result"]["artifact"].startswith("tool-results/echo-")
    assert "read_tool_result" in echo["note"]  # the Offload capability brings it to every app
    names = await services.artifact_service.list_artifact_keys(
        app_name=app.name, user_id=USER, session_id=session.id
    )
    assert names == [echo["stored_result"]["artifact"]]
    await services.close()
