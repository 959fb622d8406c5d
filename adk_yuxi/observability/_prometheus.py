"""The metrics in Prometheus' text format: the OpenTelemetry SDK with its Prometheus
reader (`PrometheusMetricReader`), served on a port of its own or as a path of a
server the process runs anyway.

Only an operator's choice loads this (the `observability` extra): library code
records through the metrics API alone (`_metrics`). Each exposition has its own
`prometheus_client` registry, so two in one process (tests) do not collide. The
scrape runs on a thread, never on the event loop: the gauges read from the store
(waiting points pending) wait for the loop to answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from .._extras import require_extra
from ._labels import BoundedLabels
from ._metrics import use_meter_provider

__all__ = ["EXTRA", "PrometheusExposition", "enable_prometheus"]

EXTRA = "observability"
_PURPOSE = "Serving metrics for Prometheus"


class PrometheusExposition:
    """An SDK `MeterProvider` whose one reader is Prometheus': `scrape()` is the text a
    scrape gets, `serve(host, port)` serves it over HTTP on its own port, and
    `asgi_endpoint()` is a route handler for an existing Starlette or FastAPI app."""

    def __init__(self, service_name: str) -> None:
        # The client first: the exporter imports it.
        self._client = require_extra("prometheus_client", EXTRA, _PURPOSE)
        sdk_metrics = require_extra("opentelemetry.sdk.metrics", EXTRA, _PURPOSE)
        resources = require_extra("opentelemetry.sdk.resources", EXTRA, _PURPOSE)
        exporter = require_extra("opentelemetry.exporter.prometheus", EXTRA, _PURPOSE)
        self.registry = self._client.CollectorRegistry(auto_describe=True)
        self.reader = exporter.PrometheusMetricReader(registry=self.registry)
        resource = resources.Resource.create({"service.name": service_name})
        self.provider = sdk_metrics.MeterProvider(metric_readers=[self.reader], resource=resource)
        self._server: Any = None
        self._thread: Any = None

    @property
    def content_type(self) -> str:
        return str(self._client.CONTENT_TYPE_LATEST)

    def scrape(self) -> bytes:
        """The current metrics in the Prometheus text format (blocks: not on the loop)."""
        return bytes(self._client.generate_latest(self.registry))

    def serve(self, host: str, port: int) -> int:
        """Serves the metrics on `host:port` (any path) from a thread; the bound port."""
        self._server, self._thread = self._client.start_http_server(
            port, addr=host, registry=self.registry
        )
        return int(self._server.server_port)

    def asgi_endpoint(self) -> Callable[[Any], Awaitable[Any]]:
        """A Starlette route handler that answers with `scrape()`, made on a thread."""
        from starlette.responses import Response

        async def metrics_endpoint(_request: Any) -> Response:
            body = await asyncio.to_thread(self.scrape)
            return Response(body, media_type=self.content_type)

        return metrics_endpoint

    def shutdown(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.provider.shutdown()


def enable_prometheus(service_name: str, *, set_global: bool = True) -> PrometheusExposition:
    """Records the process's metrics into a new Prometheus exposition. `set_global`
    installs its provider as the process's global one (ADK's own instruments, such as
    model and tool call latency, record there); it can be set once per process. Without
    it only adk_yuxi's instruments are bound to it (an embedding app's or a test's).
    Either way the tool names and HTTP methods of every series are bounded
    (`BoundedLabels`)."""
    exposition = PrometheusExposition(service_name)
    bounded = BoundedLabels(exposition.provider)
    if set_global:
        from opentelemetry import metrics

        metrics.set_meter_provider(bounded)
    use_meter_provider(bounded)
    return exposition
