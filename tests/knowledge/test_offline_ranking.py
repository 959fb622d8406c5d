"""The offline embedding model end to end through `query_kb`: a base of one file beside
the sample handbook, a paraphrase and a cross-lingual question, all ranked together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adk_yuxi.access import AccessRepository, ShareConfig, User
from adk_yuxi.knowledge import (
    DelegationKeys,
    InvalidKnowledgeRequestError,
    KnowledgeService,
    KnowledgeStore,
    OfflineEmbedder,
)

from .conftest import Platform

CORPUS = Path(__file__).parents[2] / "agents" / "knowledge" / "corpus"


async def test_bases_ranked_together_with_the_offline_model(
    sqlite_platform: Platform, tmp_path: Path
) -> None:
    store = KnowledgeStore(f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}", embedder=OfflineEmbedder())
    public = ShareConfig.public()
    await store.create_kb("Handbook", creator_id="admin", kb_id="handbook", share=public)
    for path in sorted(CORPUS.glob("*.md")):
        await store.ingest("handbook", path)
    await store.create_kb("Ops", creator_id="admin", kb_id="ops", share=public)
    await store.ingest(
        "ops", b"The zebrafinch gateway listens on port 9443 by default.", name="ops.md"
    )
    keys = DelegationKeys.generate()
    service = KnowledgeService(store, sqlite_platform.access, keys.verifier())
    token = keys.signer().mint("alice", "s1", None)
    try:

        async def best(question: str) -> dict[str, Any]:
            result = await service.query_kb_json(
                token, None, question, 5, None, ["handbook", "ops"]
            )
            assert result["kb_ids"] == ["handbook", "ops"]
            hit: dict[str, Any] = result["hits"][0]
            return hit

        top = await best("which port does the zebrafinch gateway listen on?")
        assert top["kb_id"] == "ops" and top["signals"] == ["lexical", "dense"]
        # A paraphrase (no word of the answer) and a question in the other language.
        assert "五十个连接" in str((await best("数据库连接数的上限是多少？"))["content"])
        crossed = await best("how big may the database connection pool be?")
        assert "五十个连接" in str(crossed["content"]) and "dense" in crossed["signals"]
        # The one-chunk base shares only "the" and "is" with this one: no lexical hit,
        # and the Chinese section on the pool comes first.
        crossed = await best("how big is the connection pool?")
        assert "五十个连接" in str(crossed["content"]) and crossed["signals"] == ["dense"]
        with pytest.raises(InvalidKnowledgeRequestError, match="exactly one"):
            await service.query_kb_json(token, "handbook", "x", 5, "f_1", ["ops"])
    finally:
        await store.close()


async def test_one_base_leaves_out_a_passage_that_shares_only_question_words(
    tmp_path: Path,
) -> None:
    """In one base with vectors, a passage whose only words in common with the question
    are its question words ("多少", "最多") is not the lexical side's candidate, so the
    passage found by meaning, in the other language, comes first."""
    store = KnowledgeStore(f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}", embedder=OfflineEmbedder())
    await store.prepare()
    await AccessRepository(store.store).save_user(User(id="admin"))
    await store.create_kb("Handbook", creator_id="admin", kb_id="handbook")
    files = {
        "pool.md": "The database connection pool holds at most 20 connections per service.",
        "canteen.md": "食堂最多可以坐多少人？大约两百人，每天中午十二点开门。",
        "vpn.md": "The VPN gateway needs a hardware token from the service desk.",
    }
    for name, text in files.items():
        await store.ingest("handbook", text.encode(), name=name)
    try:
        question = "数据库连接池最多有多少个连接？"
        hits = await store.query("handbook", question, top_k=3)
        assert hits[0].file_name == "pool.md" and hits[0].signals == ("dense",)
        canteen = [h for h in hits if h.file_name == "canteen.md"]
        assert all("lexical" not in h.signals for h in canteen)
        # Without vectors the same base answers by BM25 alone, the canteen first.
        lexical = KnowledgeStore(store.store.engine)
        assert (await lexical.query("handbook", question, top_k=3))[0].file_name == "canteen.md"
        await lexical.close()
    finally:
        await store.close()
