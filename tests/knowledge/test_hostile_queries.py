"""Questions and name searches with characters no question holds: refused as bad input
with a clear message, never read as the service being down, and never knocking the
dense side off for the next caller. Through the MCP server over real HTTP, and the
service over a store embedding through the loopback endpoint."""

from __future__ import annotations

import pytest

from adk_yuxi.access import ShareConfig
from adk_yuxi.knowledge import (
    DelegationKeys,
    EmbeddingError,
    InvalidKnowledgeRequestError,
    KnowledgeService,
    KnowledgeStore,
    OpenAIEmbedder,
)
from adk_yuxi.testing import EmbeddingServer

from .conftest import Platform
from .test_server import Server, _call, _error, server

__all__ = ["server"]  # the MCP server fixture, shared with test_server


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("search_file", {"query": "\x00"}),
        ("search_file", {"query": "note\x00"}),
        ("query_kb", {"kb_id": "eng", "query": "pool\x00"}),
        ("query_kb", {"kb_ids": ["eng", "pub"], "query": "\x1b[31mpool"}),
    ],
)
async def test_control_characters_are_bad_input_not_an_outage(
    server: Server, tool: str, args: dict[str, object]
) -> None:
    message = _error(await _call(server.url, server.token(), tool, args))
    assert "query must not contain control characters" in message, message


async def test_a_lone_surrogate_does_not_turn_the_dense_side_off_for_others(
    platform: Platform, db_url: str
) -> None:
    with EmbeddingServer() as endpoint:
        embedder = OpenAIEmbedder(
            "test-embed", base_url=endpoint.base_url, api_key=endpoint.api_key
        )
        with pytest.raises(EmbeddingError, match="not valid Unicode"):
            embedder.query("pool \ud800")  # not a UnicodeEncodeError from the HTTP library
        store = KnowledgeStore(db_url, embedder=embedder)
        try:
            await store.create_kb(
                "Ops", creator_id="admin", kb_id="ops", share=ShareConfig.public()
            )
            await store.ingest("ops", b"The pool holds 20 connections.", name="pool.md")
            keys = DelegationKeys.generate()
            service = KnowledgeService(store, platform.access, keys.verifier())
            token = keys.signer().mint("alice", "s", ["ops"])
            with pytest.raises(InvalidKnowledgeRequestError, match="lone surrogates"):
                await service.query_kb(token, "ops", "pool \ud800", 3, None)
            answer = await service.query_kb(token, "ops", "pool connections", 3, None)
            assert answer.hits[0].signals == ["lexical", "dense"]
        finally:
            await store.close()
