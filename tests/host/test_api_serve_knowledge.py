"""`yuxi serve api --knowledge-url` beside `yuxi serve knowledge` on one SQLite
database, as an operator starts them: two real processes on loopback ports, one key
file (the server verifies with the key the API signs with), the demo model. A served
agent naming the knowledge-base skill reaches the server; a server or key that is not
there is one line at start."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from adk_yuxi.access import AccessRepository, ResourceKind, ResourceRecord, ShareConfig, User
from adk_yuxi.cli import main
from adk_yuxi.knowledge import KNOWLEDGE_SKILL_NAME, KnowledgeStore
from tests.e2e._cli import BIN, REPO, cli_env, free_port

from ._cli_served import serve_api

AGENT = (
    "name: librarian\ndescription: Answers from the knowledge bases.\n"
    f"skills: [{KNOWLEDGE_SKILL_NAME}]\npreload_skills: [{KNOWLEDGE_SKILL_NAME}]\n"
)


async def _seed(url: str) -> None:
    store = KnowledgeStore(url)
    try:
        await store.prepare()
        access = AccessRepository(store.store)
        await access.save_user(User(id="mei"))
        await store.create_kb("Handbook", creator_id="mei", kb_id="hb", share=ShareConfig.public())
        await store.ingest("hb", b"Parking is free on weekends.", name="parking.txt")
        for kind, ident in (
            (ResourceKind.SKILL, KNOWLEDGE_SKILL_NAME),
            (ResourceKind.AGENT, "librarian"),
        ):
            await access.save_resource(
                ResourceRecord(kind=kind, id=ident, creator_id="mei", share=ShareConfig.public())
            )
    finally:
        await store.close()


@pytest.fixture
def knowledge_server(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """`yuxi serve knowledge` on a seeded database: (database URL, its /mcp URL)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}"
    asyncio.run(_seed(url))
    port = free_port()
    command = [str(BIN / "yuxi"), "serve", "knowledge", "--db", url, "--port", str(port)]
    command += ["--key", str(tmp_path / "key.jwk")]  # created here, private: one machine
    with open(tmp_path / "knowledge.log", "wb") as log:
        server = subprocess.Popen(command, cwd=REPO, env=cli_env(), stdout=log, stderr=log)
    mcp = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.post(mcp, json={}, timeout=2)  # not JSON-RPC: a 400 at once
                break
            except httpx.TransportError:
                logged = (tmp_path / "knowledge.log").read_text()
                assert server.poll() is None and time.monotonic() < deadline, logged
                time.sleep(0.2)
        yield url, mcp
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _events(client: httpx.Client, path: str, auth: dict[str, str]) -> list[dict[str, object]]:
    frames: list[dict[str, object]] = []
    with client.stream("POST", path, json={"text": "Is parking free?"}, headers=auth) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                frames.append(json.loads(line.removeprefix("data: ")))
    return frames


@pytest.mark.slow
def test_a_served_agent_queries_the_knowledge_server(
    knowledge_server: tuple[str, str], tmp_path: Path
) -> None:
    url, mcp = knowledge_server
    issued = CliRunner().invoke(main, ["api-key", "issue", "--db", url, "--user", "mei"])
    assert issued.exit_code == 0, issued.output
    auth = {"Authorization": f"Bearer {issued.output.strip()}"}
    (tmp_path / "librarian.yaml").write_text(AGENT)
    args = ["--agents", str(tmp_path / "librarian.yaml"), "--knowledge-url", mcp]
    args += ["--knowledge-key", str(tmp_path / "key.jwk")]
    root = mcp.removesuffix("/mcp")  # the server, but not its MCP path: one line at start
    wrong = CliRunner().invoke(main, ["serve", "api", "--db", url, *args[:-3], root, *args[-2:]])
    assert wrong.exit_code == 1 and f"nothing is served at {root} (404)" in wrong.output
    with (
        serve_api(args, YUXI_DATABASE_URL=url, YUXI_MODEL="yuxi-demo") as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        session = client.post("/v1/agents/librarian/sessions", headers=auth).json()["id"]
        frames = _events(client, f"/v1/agents/librarian/sessions/{session}/runs", auth)
    assert frames[-1]["status"] == "completed", frames[-1]
    results = {}
    for frame in frames[:-1]:
        for part in frame["content"]["parts"]:  # type: ignore[index]
            if "functionResponse" in part:
                results[part["functionResponse"]["name"]] = part["functionResponse"]["response"]
    assert [kb["kb_id"] for kb in results["list_kbs"]["structuredContent"]["kbs"]] == ["hb"]
    assert results["query_kb"]["structuredContent"]["hits"][0]["file_name"] == "parking.txt"
    final = frames[-2]["content"]["parts"][0]["text"]  # type: ignore[index]
    assert "Parking is free on weekends." in final


def test_an_unreachable_knowledge_server_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "librarian.yaml").write_text(AGENT)
    url = f"sqlite+aiosqlite:///{tmp_path / 'platform.db'}"
    base = ["serve", "api", "--db", url, "--agents", str(tmp_path / "librarian.yaml")]
    gone = f"http://127.0.0.1:{free_port()}/mcp"
    missing = CliRunner().invoke(
        main, [*base, "--knowledge-url", gone, "--knowledge-key", str(tmp_path / "none.jwk")]
    )
    assert missing.exit_code == 1
    assert "no delegation key at" in missing.output and "yuxi serve knowledge" in missing.output
    from adk_yuxi.knowledge import DelegationKeys

    DelegationKeys.load_or_create(tmp_path / "good.jwk")
    unreachable = CliRunner().invoke(
        main, [*base, "--knowledge-url", gone, "--knowledge-key", str(tmp_path / "good.jwk")]
    )
    assert unreachable.exit_code == 1
    assert f"the knowledge server at {gone} is not reachable" in unreachable.output
    assert "Traceback" not in unreachable.output
    without = CliRunner().invoke(main, [*base, "--port", "1"], env={"YUXI_KNOWLEDGE_URL": ""})
    assert without.exit_code == 1 and "knowledge-base" in without.output  # unknown skill
