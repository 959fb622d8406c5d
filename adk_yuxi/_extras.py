"""The one way code asks for an optional part of the package (an extra of pyproject.toml),
so a missing extra is a `MissingExtraError` naming the install line instead of a
`ModuleNotFoundError` from deep inside a dependency."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .errors import MissingExtraError

__all__ = ["missing_extra", "require_extra"]

# Import names whose distribution is named otherwise, for the message.
_PACKAGES: dict[str, str] = {
    "PIL": "pillow",
    "rapidocr_onnxruntime": "rapidocr-onnxruntime",
    "prometheus_client": "prometheus-client",
    "opentelemetry.exporter.prometheus": "opentelemetry-exporter-prometheus",
    "opentelemetry.sdk.metrics": "opentelemetry-sdk",
    "opentelemetry.sdk.resources": "opentelemetry-sdk",
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_extra(module: str, extra: str, purpose: str) -> MissingExtraError | None:
    """The error to raise when `module` (which the extra `extra` installs) is absent."""
    if _installed(module):
        return None
    return MissingExtraError(extra, _PACKAGES.get(module, module), purpose)


def require_extra(module: str, extra: str, purpose: str) -> ModuleType:
    """Imports `module`, or raises `MissingExtraError` saying which extra brings it."""
    missing = missing_extra(module, extra, purpose)
    if missing is not None:
        raise missing
    return importlib.import_module(module)
