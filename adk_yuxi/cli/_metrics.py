"""`--metrics-port` and `--metrics-path` of the serve commands: the process's metrics
for Prometheus, on a port of their own or as a path of the server (`observability`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from adk_yuxi.observability import PrometheusExposition

__all__ = ["MetricsServing", "metrics_options"]

F = TypeVar("F", bound=Callable[..., Any])


def _path(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None and (not value.startswith("/") or value == "/" or " " in value):
        raise click.BadParameter("a path such as /metrics (starts with /, not / alone)")
    return value


def metrics_options(command: F) -> F:
    port = click.option(
        "--metrics-port",
        type=click.IntRange(1, 65535),
        default=None,
        help="Serve metrics for Prometheus on this port, at any path (same address as"
        " --host); needs the 'observability' extra.",
    )
    path = click.option(
        "--metrics-path",
        default=None,
        callback=_path,
        help="Serve metrics for Prometheus at this path of the server itself (e.g."
        " /metrics, without authentication); needs the 'observability' extra.",
    )
    return port(path(command))


class MetricsServing:
    """What the options asked for: nothing, a port, a path, or both."""

    def __init__(self, service: str, port: int | None, path: str | None) -> None:
        self.port, self.path = port, path
        self.exposition: PrometheusExposition | None = None
        if port is None and path is None:
            return
        from adk_yuxi.errors import MissingExtraError
        from adk_yuxi.observability import enable_prometheus

        try:
            self.exposition = enable_prometheus(service)
        except MissingExtraError as exc:
            raise click.ClickException(str(exc)) from None

    def routes(self, taken: Iterable[str]) -> list[BaseRoute]:
        """The metrics route for the server, if a path was asked for; a path the server
        already serves is refused."""
        if self.exposition is None or self.path is None:
            return []
        from starlette.routing import Route

        if self.path in taken:
            raise click.ClickException(f"--metrics-path {self.path} is a path the server serves")
        return [Route(self.path, self.exposition.asgi_endpoint(), methods=["GET"])]

    def start(self, host: str, server_port: int | None = None) -> None:
        """Starts the metrics port (on its own thread), if one was asked for."""
        if self.exposition is None or self.port is None:
            return
        if self.port == server_port:
            raise click.ClickException("--metrics-port must differ from --port")
        try:
            bound = self.exposition.serve(host, self.port)
        except OSError as exc:
            raise click.ClickException(
                f"cannot serve metrics on {host}:{self.port}: {exc.strerror or exc}"
            ) from None
        click.echo(f"metrics for Prometheus at http://{host}:{bound}/metrics", err=True)

    def announce(self, base: str) -> None:
        if self.exposition is not None and self.path is not None:
            click.echo(f"metrics for Prometheus at {base}{self.path}", err=True)
