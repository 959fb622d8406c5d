"""`yuxi kb ...` (through click's runner) and `yuxi serve knowledge` (a real process, over
HTTP and stdio), as a user runs them."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import pytest

from adk_yuxi.knowledge import DelegationKeys
from tests.e2e._cli import BIN, cli_env, free_port, yuxi_here
from tests.knowledge.mcp_client import mcp_session

pytestmark = pytest.mark.slow


def yuxi(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`yuxi ARGS` in this process; `yuxi serve knowledge` below runs as a real process.

    Lexical only: these commands are about bases and files; embedding has its own tests
    (tests/knowledge/test_hybrid.py, tests/e2e/test_adk_run_knowledge.py).
    """
    return yuxi_here(list(args), cwd=cwd, YUXI_EMBEDDING_MODEL="none")


def test_create_ingest_list_query(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text("# 指南\n\n连接池大小等于核数。\n\nBackups run nightly.\n")
    (tmp_path / "faq.html").write_text("<html><body><p>Parking is free.</p></body></html>")
    db = str(tmp_path / "kb.db")
    assert yuxi("access", "user", "add", "root", "--db", db, cwd=tmp_path).returncode == 0
    made = yuxi("kb", "create", "Handbook", "--id", "hb", "--public", "--owner", "root",
                "--db", db, cwd=tmp_path)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "hb\tHandbook"
    added = yuxi("kb", "ingest", "hb", "guide.md", "faq.html", "--db", db, cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert "guide.md: indexing chunks done (1/1)" in added.stderr  # plain lines off a tty
    assert added.stdout.count("\tv1\t") == 2
    listed = yuxi("kb", "list", "--db", db, cwd=tmp_path)
    assert listed.stdout.strip() == "hb\tHandbook\t2 files"
    files = yuxi("kb", "list", "hb", "--db", db, cwd=tmp_path)
    assert "faq.html" in files.stdout and "guide.md" in files.stdout
    found = yuxi("kb", "query", "hb", "连接池多大", "--db", db, cwd=tmp_path)
    assert found.returncode == 0 and found.stdout.startswith("1. guide.md:1-5")
    missing = yuxi("kb", "query", "nope", "x", "--db", db, cwd=tmp_path)
    assert missing.returncode == 1 and "no knowledge base 'nope'" in missing.stderr
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 broken")
    refused = yuxi("kb", "ingest", "hb", str(broken), "--db", db, cwd=tmp_path)
    assert refused.returncode == 1 and "broken.pdf" in refused.stderr
    # A mistyped database is an error, not a new empty one (nor its folders).
    typo = tmp_path / "no" / "such" / "kb.db"
    for args in (("list",), ("query", "hb", "x"), ("ingest", "hb", "guide.md")):
        wrong = yuxi("kb", *args, "--db", str(typo), cwd=tmp_path)
        assert wrong.returncode == 1 and "no database at" in wrong.stderr
    assert not (tmp_path / "no").exists()


def test_serve_knowledge_over_http(tmp_path: Path) -> None:
    db = str(tmp_path / "kb.db")
    (tmp_path / "hours.txt").write_text("Office hours are 9 to 5.")
    assert yuxi("access", "user", "add", "ann", "--db", db, cwd=tmp_path).returncode == 0
    made = yuxi("kb", "create", "Hours", "--id", "h", "--owner", "ann", "--db", db, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert yuxi("kb", "ingest", "h", "hours.txt", "--db", db, cwd=tmp_path).returncode == 0
    port = free_port()
    key = tmp_path / "key.jwk"
    server = subprocess.Popen(
        [str(BIN / "yuxi"), "serve", "knowledge", "--db", db, "--port", str(port),
         "--key", str(key)],
        cwd=tmp_path, env=cli_env(), stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not key.exists() or not _listening(port):
            assert server.poll() is None and time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)
        keys = DelegationKeys.load_or_create(key)
        url = f"http://127.0.0.1:{port}/mcp"

        async def ask() -> tuple[object, object]:
            async with mcp_session(url, keys.signer().mint("ann", "s", ["h"])) as session:
                ok = await session.call_tool("query_kb", {"kb_id": "h", "query": "office hours"})
            other = DelegationKeys.generate().signer().mint("ann", "s", ["h"])
            async with mcp_session(url, other) as session:
                forged = await session.call_tool("list_kbs", {})
            return ok, forged

        ok, forged = asyncio.run(ask())
        assert ok.structured_content["hits"][0]["content"] == "Office hours are 9 to 5."  # type: ignore[attr-defined]
        assert forged.is_error  # type: ignore[attr-defined]
    finally:
        server.terminate()
        _, log = server.communicate(timeout=30)
    # The operator's terminal: the start lines and the refused call, not a line per request.
    assert "knowledge MCP server at" in log and "Terminating session" not in log, log


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_serve_knowledge_over_stdio_takes_the_delegation_from_meta(tmp_path: Path) -> None:
    from mcp import StdioServerParameters
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    db = str(tmp_path / "kb.db")
    (tmp_path / "hours.txt").write_text("The library opens at eight.")
    assert yuxi("access", "user", "add", "ann", "--db", db, cwd=tmp_path).returncode == 0
    made = yuxi("kb", "create", "Lib", "--id", "lib", "--owner", "ann", "--db", db, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert yuxi("kb", "ingest", "lib", "hours.txt", "--db", db, cwd=tmp_path).returncode == 0
    key = tmp_path / "key.jwk"
    keys = DelegationKeys.load_or_create(key)
    params = StdioServerParameters(
        command=str(BIN / "yuxi"),
        args=["serve", "knowledge", "--stdio", "--db", db, "--key", str(key)],
        env=cli_env(),
        cwd=tmp_path,
    )

    async def ask() -> tuple[object, object]:
        async with (
            stdio_client(params) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            token = keys.signer().mint("ann", "s", ["lib"])
            args = {"kb_id": "lib", "query": "library opens"}
            ok = await session.call_tool("query_kb", args, meta={"yuxi/delegation": token})
            missing = await session.call_tool("query_kb", args)
            return ok, missing

    ok, missing = asyncio.run(ask())
    assert ok.structured_content["hits"][0]["content"] == "The library opens at eight."  # type: ignore[attr-defined]
    assert missing.is_error and "no delegation token" in str(missing.content)  # type: ignore[attr-defined]


def test_kb_embed_fills_in_vectors_and_pings_the_configured_model(tmp_path: Path) -> None:
    from adk_yuxi.testing import EmbeddingServer

    (tmp_path / "pool.md").write_text("The pool holds at most 20 connections.\n")
    db = f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}"
    assert yuxi("access", "user", "add", "root", "--db", db, cwd=tmp_path).returncode == 0
    made = yuxi("kb", "create", "Ops", "--id", "ops", "--owner", "root", "--db", db, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert yuxi("kb", "ingest", "ops", "pool.md", "--db", db, cwd=tmp_path).returncode == 0
    with EmbeddingServer() as server:

        def embed(*args: str, key: str = server.api_key) -> subprocess.CompletedProcess[str]:
            return yuxi_here(
                ["kb", "embed", *args], cwd=tmp_path,
                YUXI_EMBEDDING_MODEL="test-embed", YUXI_EMBEDDING_BASE_URL=server.base_url,
                YUXI_EMBEDDING_API_KEY=key,
            )  # fmt: skip

        ping = embed("--ping")
        assert ping.returncode == 0 and ping.stdout.startswith("ok\ttest-embed: 64 dimensions")
        filled = embed("ops", "--db", db)
        assert filled.returncode == 0, filled.stderr
        assert filled.stdout.strip() == "ops\t1 chunks embedded"
        assert embed("ops", "--db", db).stdout.strip() == "ops\t0 chunks embedded"
        wrong = embed("--ping", key="bad")
        assert wrong.returncode == 1 and "answered 401" in wrong.stdout
