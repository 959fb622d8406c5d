"""The dev UI of `adk web agents` in headless Chromium, on the yuxi+sqlite services:
what a person sees after choosing the assistant and chatting, across a server restart.

Offline on the demo model. Each step saves a screenshot if it fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest

from adk_yuxi.storage import open_services
from tests.e2e._browser import Page, chromium, require_browser
from tests.e2e._web import adk_web

pytestmark = pytest.mark.slow


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home directory for the server that records telemetry consent as off, so ADK's
    consent dialog does not cover the page (and nothing is written to the real home)."""
    folder = tmp_path / "home"
    (folder / ".adk").mkdir(parents=True)
    (folder / ".adk" / "config.json").write_text(json.dumps({"telemetry": False}))
    return folder


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    return Path(os.environ.get("YUXI_SCREENSHOT_DIR", tmp_path / "screenshots"))


def yuxi_uris(db: Path) -> tuple[str, ...]:
    uri = f"yuxi+sqlite:///{db}"
    return (
        "--session_service_uri",
        uri,
        "--memory_service_uri",
        uri,
        "--artifact_service_uri",
        uri,
    )


def test_dev_ui_chat_tools_state_artifacts_and_restart(
    tmp_path: Path, home: Path, screenshots: Path
) -> None:
    require_browser()
    db = tmp_path / "web.db"
    upload = tmp_path / "plan.csv"
    upload.write_text("step,owner\nlaunch,ana\n")
    log = tmp_path / "adk-web.log"

    with chromium() as driver:
        page = Page(driver, screenshots)
        with adk_web(*yuxi_uris(db), log=log, HOME=str(home)) as base:
            with page.step_named("select-agent"):
                page.open(f"{base}/dev-ui/")
                page.button("Select an app")
                page.click_text("assistant")
                page.wait_for(lambda _: "app=assistant" in driver.current_url, "the assistant")

            with page.step_named("reply-and-tool-call"):
                page.send("remember the launch is on Friday")
                seen = page.wait_for_text('(demo model) save_note returned {"saved": true')
                assert 'save_note("the launch is on Friday")' in seen  # the call, in the events

            with page.step_named("generated-file"):
                page.send("write file report.md with # Weekly report")
                page.wait_for_text('save_text_file returned {"saved": "report.md"')

            with page.step_named("upload"):
                page.attach(upload)
                page.send("here is the plan")
                page.wait_for_text("I received 'plan.csv'. It is saved as an artifact")

            with page.step_named("state-tab"):
                page.tab("State")
                page.wait_for_text("user:notes", '"the launch is on Friday"')

            with page.step_named("artifacts-tab"):
                page.tab("Artifacts")
                page.wait_for_text("report.md", "plan.csv", "# Weekly report")

            session = re.search(r"[?&]session=([\w-]+)", driver.current_url)
            assert session, driver.current_url
            session_id = session.group(1)

        with adk_web(*yuxi_uris(db), log=log, HOME=str(home)) as base:
            with page.step_named("session-after-restart"):
                page.open(f"{base}/dev-ui/?app=assistant&userId=user&session={session_id}")
                page.wait_for_text(
                    "remember the launch is on Friday",
                    "(demo model) save_note returned",
                    "here is the plan",
                )

            with page.step_named("memory-in-a-new-session"):
                page.open(f"{base}/dev-ui/?app=assistant")
                page.send("search my memory for launch")
                page.wait_for_text("From past conversations:", "'remember the launch is on Friday'")

    assert "Traceback" not in log.read_text()
    rows = asyncio.run(stored(db, session_id))
    assert rows["events"] >= 9
    assert rows["notes"] == ["the launch is on Friday"]
    assert {"report.md", "plan.csv"} <= set(rows["artifacts"])
    assert rows["memories"] > 0


async def stored(db: Path, session_id: str) -> dict[str, object]:
    async with open_services(f"sqlite+aiosqlite:///{db}") as services:
        session = await services.session_service.get_session(
            app_name="assistant", user_id="user", session_id=session_id
        )
        assert session is not None
        artifacts = await services.artifact_service.list_artifact_keys(
            app_name="assistant", user_id="user", session_id=session_id
        )
        memories = await services.memory_service.search_memory(
            app_name="assistant", user_id="user", query="launch"
        )
    return {
        "events": len(session.events),
        "notes": session.state.get("user:notes"),
        "artifacts": artifacts,
        "memories": len(memories.memories),
    }


def test_dev_ui_shows_an_unusable_model_in_the_conversation(
    tmp_path: Path, home: Path, screenshots: Path
) -> None:
    require_browser()
    log = tmp_path / "adk-web.log"
    with chromium() as driver:
        page = Page(driver, screenshots)
        args = yuxi_uris(tmp_path / "web.db")
        server = adk_web(*args, log=log, HOME=str(home), YUXI_MODEL="nonsense")
        with server as base, page.step_named("unusable-model"):
            page.open(f"{base}/dev-ui/?app=assistant")
            page.send("hello")
            page.wait_for_text("hello", "YUXI_MODEL_UNUSABLE", "'openai/MODEL'")
    assert "Traceback" not in log.read_text()
