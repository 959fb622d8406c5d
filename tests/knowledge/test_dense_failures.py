"""A knowledge query keeps answering when its dense side cannot: the embedding endpoint
failing (a real 503 from the loopback server), or a base whose stored vectors are
damaged so its index cannot be built. It answers lexically, says so in each hit's
signals, and does not pay for the failure again on every question (`Backoff`)."""

from __future__ import annotations

import logging
import time

import pytest

from adk_yuxi.knowledge import KnowledgeStore, OpenAIEmbedder
from adk_yuxi.knowledge._backoff import Backoff
from adk_yuxi.knowledge._dense import DenseSearch
from adk_yuxi.knowledge._hybrid import HybridSearch
from adk_yuxi.knowledge._search import KnowledgeSearch
from adk_yuxi.testing import EmbeddingServer

from ._three_docs import embedder, filled
from .conftest import Platform


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_failing_embedding_endpoint_leaves_the_query_lexical_for_a_while(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = await filled(db_url, server)
    clock = Clock()
    assert store.embedder is not None
    hybrid = HybridSearch(
        KnowledgeSearch(), DenseSearch(), store.embedder, retry=Backoff(first=5, clock=clock)
    )
    try:
        server.fail_with = (503, "overloaded")
        hits = await hybrid.query(store.store, ["kb"], "pool connections", 3)
        assert hits and hits[0].file_name == "pool.md"
        assert {h.signals for h in hits} == {("lexical",)}
        asked = len(server.requests)
        # Within the wait, the endpoint is not asked again; the answer is still lexical.
        clock.now += 4
        again = await hybrid.query(store.store, ["kb"], "hardware token", 3)
        assert again[0].file_name == "vpn.md" and len(server.requests) == asked
        # After it, the next question tries again: still failing, the wait doubles.
        clock.now += 2
        await hybrid.query(store.store, ["kb"], "noon lunch", 3)
        assert len(server.requests) == asked + 1
        clock.now += 9
        await hybrid.query(store.store, ["kb"], "fourth floor", 3)
        assert len(server.requests) == asked + 1
        # The endpoint is back: dense again, found by both signals.
        server.fail_with = None
        clock.now += 2
        back = await hybrid.query(store.store, ["kb"], "pool connections", 3)
        assert back[0].signals == ("lexical", "dense")
        assert len(server.requests) == asked + 2
    finally:
        await store.close()


async def test_damaged_vectors_leave_the_base_lexical_until_it_changes(
    platform: Platform, server: EmbeddingServer, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = await filled(db_url, server)
    try:
        async with store.store.write() as tx:  # a vector cut short, as a bad copy leaves it
            await tx.execute(
                "UPDATE yx_kb_vectors SET vector = :v"
                " WHERE cid = (SELECT min(cid) FROM yx_kb_vectors)",
                {"v": b"\x00\x01\x02"},
            )
    finally:
        await store.close()
    fresh = KnowledgeStore(db_url, embedder=embedder(server))  # another process: no index
    try:
        with caplog.at_level(logging.WARNING, logger="adk_yuxi.knowledge._dense"):
            for question in ("pool connections", "hardware token", "noon lunch"):
                hits = await fresh.query("kb", question, top_k=3)
                assert hits and {h.signals for h in hits} == {("lexical",)}, question
        failures = [r for r in caplog.records if "not built" in r.getMessage()]
        assert len(failures) == 1  # tried once, not by every query
        # A change to the base (a new label) builds again, and this time it can.
        async with fresh.store.write() as tx:
            await tx.execute("DELETE FROM yx_kb_vectors WHERE length(vector) = 3")
        await fresh.ingest("kb", b"Parking badges are issued at reception.", name="p.md")
        await fresh.embed("kb")
        hits = await fresh.query("kb", "parking badges reception", top_k=3)
        assert hits[0].file_name == "p.md" and "dense" in hits[0].signals
    finally:
        await fresh.close()


async def test_a_base_of_another_model_answers_lexically_and_says_so_once(
    platform: Platform, server: EmbeddingServer, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = await filled(db_url, server)
    await store.close()
    server.models = ("test-embed", "other-embed")
    other = OpenAIEmbedder("other-embed", base_url=server.base_url, api_key=server.api_key)
    switched = KnowledgeStore(db_url, embedder=other)  # the model changed, the base not
    try:
        with caplog.at_level(logging.WARNING, logger="adk_yuxi.knowledge._hybrid"):
            for question in ("pool connections", "hardware token"):
                hits = await switched.query("kb", question, top_k=3)
                assert hits and {h.signals for h in hits} == {("lexical",)}, question
        said = [r.getMessage() for r in caplog.records if "holds vectors from" in r.getMessage()]
        assert said == [
            "knowledge base 'kb' holds vectors from 'test-embed', not 'other-embed': it answers"
            " lexically only until re-embedded (`yuxi kb embed kb --replace`)"
        ]
    finally:
        await switched.close()


async def test_a_slow_embedding_endpoint_holds_a_question_only_so_long(
    platform: Platform, db_url: str
) -> None:
    with EmbeddingServer() as server:
        store = await filled(db_url, server)
        assert store.embedder is not None
        hybrid = HybridSearch(KnowledgeSearch(), DenseSearch(), store.embedder, embed_seconds=0.5)
        try:
            server.delay_seconds = 3.0  # each answer; the client's own timeout is a minute
            started = time.monotonic()
            hits = await hybrid.query(store.store, ["kb"], "pool connections", 3)
            assert time.monotonic() - started < 2
            assert hits[0].file_name == "pool.md" and hits[0].signals == ("lexical",)
            assert hybrid.guard.skipping()  # the next questions do not wait either
        finally:
            await store.close()


async def test_a_question_the_endpoint_refuses_does_not_skip_the_model_for_the_next(
    platform: Platform, server: EmbeddingServer, db_url: str
) -> None:
    store = await filled(db_url, server)
    try:
        # A provider's content filter answers 400 for one question (DashScope does).
        server.fail_with = (400, "Input data may contain inappropriate content.")
        hits = await store.query("kb", "pool connections", top_k=3)
        assert hits[0].file_name == "pool.md" and hits[0].signals == ("lexical",)
        server.fail_with = None  # the next caller's question is fine: asked at once
        back = await store.query("kb", "hardware token", top_k=3)
        assert back[0].file_name == "vpn.md" and back[0].signals == ("lexical", "dense")
    finally:
        await store.close()
