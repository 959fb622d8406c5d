"""The embedding endpoint's secrets and bounds: the API key and a password in
`YUXI_EMBEDDING_BASE_URL` appear in no message or log line, whatever the endpoint
echoes; a key no HTTP header can carry is refused by name, not shown; an answer too
large or too slow is cut off. Real HTTP on loopback (`HostileEmbeddingServer`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest

from adk_yuxi.knowledge import EmbeddingError, KnowledgeStore, OpenAIEmbedder
from adk_yuxi.knowledge import embedder_from_env as from_env
from adk_yuxi.memory import MemoryEmbeddingError
from adk_yuxi.memory._vectors import MemoryVectors
from tests.e2e._cli import yuxi_here

from .conftest import Platform
from .hostile_embeddings import HostileEmbeddingServer

KEY = "sk-live-7Hq2ZpX9"


@pytest.fixture
def server() -> Iterator[HostileEmbeddingServer]:
    with HostileEmbeddingServer(api_key=KEY) as running:
        yield running


async def test_a_key_the_endpoint_echoes_is_in_no_message_or_log_line(
    platform: Platform, server: HostileEmbeddingServer, db_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    embedder = OpenAIEmbedder("test-embed", base_url=server.base_url, api_key=KEY)
    store = KnowledgeStore(db_url, embedder=embedder)
    try:
        await store.create_kb("kb", creator_id="admin", kb_id="kb")
        await store.ingest("kb", b"The VPN gateway needs a hardware token.", name="vpn.md")
        server.fault = "echo_key"
        with pytest.raises(EmbeddingError) as failed:
            embedder.query("hardware token")
        assert "answered 401: Incorrect API key: Bearer ***" in str(failed.value)
        with pytest.raises(MemoryEmbeddingError) as memory:
            await MemoryVectors(embedder).query("hardware token")
        with caplog.at_level(logging.DEBUG):
            hits = await store.query("kb", "hardware token", top_k=1)
        assert hits[0].signals == ("lexical",)
        logged = [r.getMessage() for r in caplog.records]
        assert any("401" in line for line in logged)
        for said in [str(failed.value), str(memory.value), repr(embedder), *logged]:
            assert KEY not in said, said
    finally:
        await store.close()


def test_a_password_in_the_url_is_shown_as_stars(
    server: HostileEmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = server.base_url.replace("http://", "http://bob:hunter%3A2@")
    embedder = OpenAIEmbedder("test-embed", base_url=url, api_key=KEY)
    server.fault = "echo_key"  # the URL's user goes as Basic auth: echoed back
    with caplog.at_level(logging.DEBUG), pytest.raises(EmbeddingError) as failed:
        embedder.query("x")
    assert any("HTTP Request" in r.getMessage() for r in caplog.records)  # httpx's own
    assert not [r for r in caplog.records if "hunter" in r.getMessage()]
    said = str(failed.value)
    assert "http://***@127.0.0.1" in said and "hunter" not in said, said
    assert "Ym9iOmh1bnRlcjoy" not in said and "hunter" not in repr(embedder)
    env = {"YUXI_EMBEDDING_MODEL": "test-embed", "YUXI_EMBEDDING_BASE_URL": url}
    ping = yuxi_here(["kb", "embed", "--ping"], **env)
    assert ping.returncode == 1 and "hunter" not in ping.stdout + ping.stderr, ping.stdout
    # A token as the URL's user alone (no password), echoed as Basic auth.
    alone = OpenAIEmbedder("x", base_url=server.base_url.replace("//", "//tok-9Zq@"))
    with pytest.raises(EmbeddingError) as failed:
        alone.query("x")
    assert "tok-9Zq" not in str(failed.value) and "dG9rLTlacTo" not in str(failed.value)


@pytest.mark.parametrize("key", [KEY + "\u200b", "clé-secrète", "sk a"])
def test_a_key_no_header_can_carry_is_refused_by_name(
    server: HostileEmbeddingServer, key: str
) -> None:
    with pytest.raises(EmbeddingError, match="YUXI_EMBEDDING_API_KEY has characters") as bad:
        OpenAIEmbedder("test-embed", base_url=server.base_url, api_key=key)
    assert key not in str(bad.value)


def test_blanks_around_the_settings_are_dropped(server: HostileEmbeddingServer) -> None:
    embedder = from_env(
        {
            "YUXI_EMBEDDING_MODEL": " test-embed ",
            "YUXI_EMBEDDING_BASE_URL": f" {server.base_url} \n",
            "YUXI_EMBEDDING_API_KEY": f"{KEY}\n",  # as `cat key.txt` leaves it
        }
    )
    assert embedder is not None and embedder.query("a b").shape == (64,)


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1/v1", "file:///etc/passwd", "javascript:alert(1)", "http://", "//h/v1"]
)
def test_a_url_that_is_not_http_is_refused_when_configured(url: str) -> None:
    with pytest.raises(EmbeddingError, match="YUXI_EMBEDDING_BASE_URL"):
        from_env({"YUXI_EMBEDDING_MODEL": "test-embed", "YUXI_EMBEDDING_BASE_URL": url})


def test_a_huge_answer_is_cut_off(server: HostileEmbeddingServer) -> None:
    embedder = OpenAIEmbedder("test-embed", base_url=server.base_url, api_key=KEY)
    server.fault = "huge"  # valid JSON, after 40 MiB of blanks
    with pytest.raises(EmbeddingError, match="more than 1310720 bytes"):
        embedder.query("a b")


def test_a_trickling_answer_meets_one_deadline(server: HostileEmbeddingServer) -> None:
    embedder = OpenAIEmbedder("test-embed", base_url=server.base_url, api_key=KEY, timeout=1)
    server.fault = "trickle"  # a byte every 0.2 s: no single read waits for 1 s
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match="no full answer within 1 s"):
        embedder.query("a b")
    assert time.monotonic() - started < 3
