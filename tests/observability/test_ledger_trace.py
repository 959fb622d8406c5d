"""The ledger's claim, renewal, close and take-over as spans, on SQLite and PostgreSQL:
the run, the worker, the outcome; a refusal as the span's `error.type`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adk_yuxi.ledger import LeaseHeld, RunLedger
from adk_yuxi.storage import YuxiServices, open_services
from tests.sql_backends import db_url, pg_schema

from .conftest import Spans

__all__ = ["db_url", "pg_schema"]  # fixtures, imported for pytest


@pytest.fixture
async def services(db_url: str, tmp_path: Path) -> AsyncIterator[YuxiServices]:
    opened = open_services(db_url, blob_dir=tmp_path / "blobs")
    try:
        yield opened
    finally:
        await opened.close()


async def test_claim_renew_take_over_and_close(services: YuxiServices, spans: Spans) -> None:
    ledger = RunLedger(services.store)
    key = dict(app_name="app", user_id="u", session_id="s1", invocation_id="e-1", agent_name="a")
    first = await ledger.begin(**key, worker="A", lease_seconds=60)
    with pytest.raises(LeaseHeld):
        await ledger.take_over(first.run_id, "B", 5)
    assert await ledger.renew(first.run_id, "A", 0.2)
    await asyncio.sleep(0.3)
    await ledger.take_over(first.run_id, "B", 5)
    assert await ledger.renew(first.run_id, "A", 5) is False
    assert await ledger.finish(first.run_id, "B", "completed")

    backend = services.store.backend
    claim = spans.one("yuxi.ledger.claim")
    assert dict(claim.attributes or {}) == {
        "db.system.name": backend,
        "gen_ai.conversation.id": "s1",
        "gen_ai.agent.name": "a",
        "yuxi.ledger.worker": "A",
        "yuxi.run.id": first.run_id,
        "yuxi.ledger.outcome": "claimed",
    }
    refused, taken = spans.named("yuxi.ledger.take_over")
    assert refused.attributes is not None and refused.attributes["error.type"] == "LeaseHeld"
    assert taken.attributes is not None
    assert taken.attributes["yuxi.ledger.outcome"] == "taken_over"
    assert taken.attributes["yuxi.ledger.worker"] == "B"
    renewed, lost = spans.named("yuxi.ledger.renew")
    assert renewed.attributes is not None and renewed.attributes["yuxi.ledger.outcome"] == "renewed"
    assert lost.attributes is not None and lost.attributes["yuxi.ledger.outcome"] == "lost"
    closed = spans.one("yuxi.ledger.close")
    assert closed.attributes is not None
    assert closed.attributes["yuxi.run.status"] == "completed"
    assert closed.attributes["yuxi.ledger.outcome"] == "closed"
