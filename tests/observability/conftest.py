"""A Prometheus exposition for one test: its own provider (the global one is set once
per process, so it is injected), served on a loopback port, unbound afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adk_yuxi.observability import enable_prometheus, use_meter_provider
from tests.sql_backends import db_url, pg_schema, services

__all__ = ["db_url", "metrics_url", "pg_schema", "services"]


@pytest.fixture
def metrics_url() -> Iterator[str]:
    """The URL a Prometheus server would scrape for this test's metrics."""
    exposed = enable_prometheus("yuxi-test", set_global=False)
    port = exposed.serve("127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{port}/metrics"
    finally:
        exposed.shutdown()
        use_meter_provider(None)
