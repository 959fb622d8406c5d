"""`yuxi serve api` says what it serves before it starts serving."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest

from adk_yuxi.cli._api_banner import startup_banner
from adk_yuxi.host import ApiConfig, create_app
from adk_yuxi.knowledge import (
    OFFLINE_EMBEDDING_MODEL,
    DelegationKeys,
    OfflineEmbedder,
    install_knowledge,
)
from adk_yuxi.mcp import McpServerRegistry
from adk_yuxi.runtime import AgentConfig, Toolbox
from adk_yuxi.skills import SkillCatalog
from adk_yuxi.tools import default_registry
from tests.e2e._cli import BIN, cli_env, free_port


def test_the_banner_names_agents_database_worker_and_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    agents = (AgentConfig(name="helper", tools=()), AgentConfig(name="writer", tools=()))
    secret = ApiConfig(
        database_url="postgresql://ops:hunter2@db.internal/yuxi", agents=agents, worker="w1"
    )
    text = startup_banner(create_app(secret), secret, "0.0.0.0", 9000)
    assert "agents:   helper, writer (2)" in text
    assert "database: postgresql+asyncpg://ops:***@db.internal/yuxi" in text
    assert "hunter2" not in text
    assert "worker:   w1; every `yuxi serve api` on this database is one more worker" in text
    assert "address:  http://0.0.0.0:9000" in text
    local = ApiConfig(database_url="sqlite:///.yuxi/yuxi.db", agents=agents[:1])
    text = startup_banner(create_app(local), local, "127.0.0.1", 0)
    assert f"(file {tmp_path / '.yuxi' / 'yuxi.db'})" in text
    assert "on a port the system picks" in text
    assert "mcp:" not in text  # none installed


def test_the_banner_names_the_mcp_servers_without_credentials(tmp_path: Path) -> None:
    servers = McpServerRegistry()
    skills = SkillCatalog(default_registry, servers)
    url = "http://kb:hunter2@127.0.0.1:8765/mcp?token=hunter2"
    install_knowledge(servers, skills, url=url, signer=DelegationKeys.generate().signer())
    agents = (AgentConfig(name="helper", tools=()),)
    config = ApiConfig(
        database_url=f"sqlite:///{tmp_path / 'y.db'}",
        agents=agents,
        toolbox=Toolbox(skills=skills, mcp_servers=servers),
    )
    text = startup_banner(create_app(config), config, "127.0.0.1", 9000)
    assert "mcp:      knowledge at http://127.0.0.1:8765/mcp" in text
    assert "hunter2" not in text


def test_serve_api_prints_it_on_the_default_database(tmp_path: Path) -> None:
    (tmp_path / "helper.yaml").write_text("name: helper\ndescription: Helps.\ntools: []\n")
    port = free_port()
    server = subprocess.Popen(
        [str(BIN / "yuxi"), "serve", "api", "--agents", "helper.yaml", "--port", str(port)],
        cwd=tmp_path,
        env=cli_env(YUXI_DATABASE_URL="", YUXI_MODEL="yuxi-demo"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "did not start"
            time.sleep(0.1)
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    assert "agents:   helper (1)" in stderr
    assert f"database: sqlite+aiosqlite:///.yuxi/yuxi.db (file {tmp_path}/.yuxi/yuxi.db)" in stderr
    assert f"address:  http://127.0.0.1:{port}" in stderr
    assert (tmp_path / ".yuxi" / "yuxi.db").exists()


def test_the_banner_says_how_memory_is_searched(tmp_path: Path) -> None:
    agents = (AgentConfig(name="helper", tools=()),)
    url = f"sqlite:///{tmp_path / 'y.db'}"
    plain = ApiConfig(database_url=url, agents=agents)
    assert (
        "memory:   full text\n" in startup_banner(create_app(plain), plain, "127.0.0.1", 1) + "\n"
    )
    embedded = ApiConfig(database_url=url, agents=agents, memory_embedder=OfflineEmbedder())
    text = startup_banner(create_app(embedded), embedded, "127.0.0.1", 1)
    assert f"memory:   full text and embeddings ({OFFLINE_EMBEDDING_MODEL})" in text


def test_memory_embeddings_need_a_model(tmp_path: Path) -> None:
    (tmp_path / "helper.yaml").write_text("name: helper\ndescription: Helps.\ntools: []\n")
    done = subprocess.run(
        [str(BIN / "yuxi"), "serve", "api", "--agents", "helper.yaml", "--memory-embeddings"],
        cwd=tmp_path,
        env=cli_env(YUXI_DATABASE_URL="", YUXI_MODEL="yuxi-demo", YUXI_EMBEDDING_MODEL="none"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "memory embeddings need an embedding model" in done.stderr
