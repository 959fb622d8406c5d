"""Bounded label values: a metric's series cannot be multiplied from outside.

A model may call tools that do not exist, and anyone may send a request with an
invented HTTP method; each new value of a label is a new series in every metric that
carries it (1,000 made-up tool names once made a 5 MB exposition). So two labels take
their values from known sets only, in every instrument, ADK's own included
(`gen_ai.execute_tool.duration`):

- ``gen_ai.tool.name``: the tools of the apps this process built (`know_tools`, called by
  `build_app`, and by the offload plugin for every real tool that ran, such as an MCP
  server's), else ``_unknown``;
- ``http.request.method``: the methods of RFC 9110 and PATCH, else ``_OTHER``
  (OpenTelemetry's semantic convention).

`BoundedLabels` applies them: a `MeterProvider` around the SDK's whose instruments
rewrite these attributes before recording, an attribute filter in front of the SDK
(its views can drop an attribute, not map its values).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from opentelemetry.metrics import (
    CallbackOptions,
    CallbackT,
    Meter,
    MeterProvider,
    ObservableCounter,
    ObservableGauge,
    ObservableUpDownCounter,
    Observation,
)

__all__ = [
    "HTTP_METHODS",
    "OTHER_METHOD",
    "UNKNOWN_TOOL",
    "BoundedLabels",
    "bounded_attributes",
    "know_tools",
    "method_label",
    "tool_label",
]

UNKNOWN_TOOL = "_unknown"
OTHER_METHOD = "_OTHER"
HTTP_METHODS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
)
_known: set[str] = set()
_known_lock = threading.Lock()


def know_tools(names: Iterable[str]) -> None:
    """Adds tool names to the known set (process-wide: every app built here)."""
    fresh = [n for n in names if isinstance(n, str) and n not in _known]
    if fresh:
        with _known_lock:
            _known.update(fresh)


def tool_label(name: Any) -> str:
    return name if isinstance(name, str) and name in _known else UNKNOWN_TOOL


def method_label(method: Any) -> str:
    return method if isinstance(method, str) and method in HTTP_METHODS else OTHER_METHOD


_BOUNDED: dict[str, Callable[[Any], str]] = {
    "gen_ai.tool.name": tool_label,
    "http.request.method": method_label,
}


def bounded_attributes(attributes: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """``attributes`` with bounded labels mapped to their known sets (the same mapping
    when nothing changes)."""
    if not attributes:
        return attributes
    changed: dict[str, Any] | None = None
    for key, bound in _BOUNDED.items():
        if key in attributes:
            value = attributes[key]
            label = bound(value)
            if label != value:
                changed = dict(attributes) if changed is None else changed
                changed[key] = label
    return attributes if changed is None else changed


class _Instrument:
    """An instrument that records with bounded attributes."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def add(self, amount: Any, attributes: Any = None, *args: Any, **kwargs: Any) -> None:
        self._inner.add(amount, bounded_attributes(attributes), *args, **kwargs)

    def record(self, amount: Any, attributes: Any = None, *args: Any, **kwargs: Any) -> None:
        self._inner.record(amount, bounded_attributes(attributes), *args, **kwargs)

    def set(self, amount: Any, attributes: Any = None, *args: Any, **kwargs: Any) -> None:
        self._inner.set(amount, bounded_attributes(attributes), *args, **kwargs)


Callback = Callable[[CallbackOptions], Iterable[Observation]]


def _bounded_callback(callback: Any) -> Callback:
    """Plain callbacks only (ADK and adk_yuxi register no generators)."""

    def observe(options: CallbackOptions) -> Iterable[Observation]:
        return [
            Observation(o.value, bounded_attributes(o.attributes), o.context)
            for o in callback(options)
        ]

    return observe


class _Meter(Meter):
    def __init__(self, inner: Meter) -> None:
        super().__init__(inner.name, inner.version, inner.schema_url)
        self._inner = inner

    def _sync(self, kind: str, *args: Any, **kwargs: Any) -> Any:
        return _Instrument(getattr(self._inner, kind)(*args, **kwargs))

    def _observable(
        self, kind: str, name: str, callbacks: Sequence[Any] | None, unit: str, description: str
    ) -> Any:
        wrapped = [_bounded_callback(c) for c in callbacks or ()]
        return getattr(self._inner, kind)(name, wrapped, unit=unit, description=description)

    def create_counter(self, *args: Any, **kwargs: Any) -> Any:
        return self._sync("create_counter", *args, **kwargs)

    def create_up_down_counter(self, *args: Any, **kwargs: Any) -> Any:
        return self._sync("create_up_down_counter", *args, **kwargs)

    def create_histogram(self, *args: Any, **kwargs: Any) -> Any:
        return self._sync("create_histogram", *args, **kwargs)

    def create_gauge(self, *args: Any, **kwargs: Any) -> Any:
        return self._sync("create_gauge", *args, **kwargs)

    def create_observable_counter(
        self,
        name: str,
        callbacks: Sequence[CallbackT] | None = None,
        unit: str = "",
        description: str = "",
    ) -> ObservableCounter:
        made = self._observable("create_observable_counter", name, callbacks, unit, description)
        return cast(ObservableCounter, made)

    def create_observable_up_down_counter(
        self,
        name: str,
        callbacks: Sequence[CallbackT] | None = None,
        unit: str = "",
        description: str = "",
    ) -> ObservableUpDownCounter:
        made = self._observable(
            "create_observable_up_down_counter", name, callbacks, unit, description
        )
        return cast(ObservableUpDownCounter, made)

    def create_observable_gauge(
        self,
        name: str,
        callbacks: Sequence[CallbackT] | None = None,
        unit: str = "",
        description: str = "",
    ) -> ObservableGauge:
        made = self._observable("create_observable_gauge", name, callbacks, unit, description)
        return cast(ObservableGauge, made)


class BoundedLabels(MeterProvider):
    """`provider` with every instrument's bounded labels mapped to their known sets."""

    def __init__(self, provider: MeterProvider) -> None:
        self.provider = provider

    def get_meter(
        self,
        name: str,
        version: str | None = None,
        schema_url: str | None = None,
        attributes: Any = None,
    ) -> Meter:
        return _Meter(self.provider.get_meter(name, version, schema_url, attributes))

    def shutdown(self, *args: Any, **kwargs: Any) -> Any:
        return self.provider.shutdown(*args, **kwargs)  # type: ignore[attr-defined]
