"""Every name a public package exports exists, and nothing private leaks into `__all__`."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = [
    "adk_yuxi",
    "adk_yuxi.tools",
    "adk_yuxi.models",
    "adk_yuxi.testing",
    "adk_yuxi.cli",
    "adk_yuxi.documents",
    "adk_yuxi.web",
    "adk_yuxi.knowledge",
]


@pytest.mark.parametrize("name", PUBLIC)
def test_exports_resolve(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert exported, f"{name} exports nothing"
    assert len(exported) == len(set(exported))
    for symbol in exported:
        assert not symbol.startswith("_") or symbol == "__version__"
        assert hasattr(module, symbol), f"{name}.{symbol} is listed but missing"
