"""The dev UI's Artifacts tab lists a stored tool result: ADK's own FastAPI app (what
`adk web` serves, built in-process) runs a `build_app` agent on the demo model over our
SQLite services, and its `list_artifact_names` route returns the stored result, whose
content is the tool's whole result."""

from __future__ import annotations

import base64
import json
import textwrap
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from google.adk.cli.fast_api import get_fast_api_app

from adk_yuxi.storage import register_service_schemes

pytestmark = pytest.mark.slow  # ADK's FastAPI app loads in about 15 s

AGENT = '''
from adk_yuxi import AgentConfig, LocalPrincipals, Toolbox, build_app
from adk_yuxi.tools import ToolRegistry, tool

registry = ToolRegistry()


@tool(registry=registry)
def sensor_dump() -> dict:
    """Dumps every sensor reading."""
    return {"rows": [f"sensor {i}: {i % 40} degrees" for i in range(2000)]}


app = build_app(
    AgentConfig(name="offloaded", instruction="Dump the sensors."),
    LocalPrincipals(),
    toolbox=Toolbox(registry=registry),
    model="yuxi-demo",
)
'''


def test_the_artifacts_route_lists_the_stored_result(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    (agents / "offloaded").mkdir(parents=True)
    (agents / "offloaded" / "__init__.py").write_text("from . import agent\n")
    (agents / "offloaded" / "agent.py").write_text(textwrap.dedent(AGENT))
    register_service_schemes()
    uri = f"yuxi+sqlite:///{tmp_path / 'yuxi.db'}"
    web = get_fast_api_app(
        agents_dir=str(agents), session_service_uri=uri, artifact_service_uri=uri, web=False
    )
    base = "/apps/offloaded/users/u1/sessions/s1"
    with TestClient(web) as client:
        assert client.post(base, json={}).status_code == 200
        message = {"role": "user", "parts": [{"text": "/call sensor_dump {}"}]}
        body = {"appName": "offloaded", "userId": "u1", "sessionId": "s1", "newMessage": message}
        events = client.post("/run", json=body)
        assert events.status_code == 200, events.text
        (shown,) = [
            part["functionResponse"]["response"]
            for event in events.json()
            for part in event.get("content", {}).get("parts", [])
            if "functionResponse" in part
        ]
        name = shown["stored_result"]["artifact"]
        assert any(e.get("actions", {}).get("artifactDelta") == {name: 0} for e in events.json())
        listed = client.get(f"{base}/artifacts")
        assert listed.status_code == 200 and listed.json() == [name]
        loaded = client.get(f"{base}/artifacts/{name}").json()
        data = base64.urlsafe_b64decode(loaded["inlineData"]["data"] + "==")
        assert json.loads(data)["rows"][-1] == "sensor 1999: 39 degrees"
        assert loaded["inlineData"]["mimeType"] == "application/json"
