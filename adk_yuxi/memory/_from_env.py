"""`YUXI_MEMORY_EMBEDDINGS`: memory search by meaning, switched on by one variable that
every entry point reads (`yuxi serve api`, and the `yuxi+` service URIs that `adk run`
and `adk web` build their memory service from)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ._errors import MemoryConfigError

if TYPE_CHECKING:
    from ..knowledge._embedding import Embedder

__all__ = ["MEMORY_EMBEDDINGS_ENV", "memory_embedder_from_env"]

MEMORY_EMBEDDINGS_ENV = "YUXI_MEMORY_EMBEDDINGS"
_ON = {"1", "true", "yes", "on"}
_OFF = {"", "0", "false", "no", "off"}


def memory_embedder_from_env(
    env: Mapping[str, str] | None = None, *, enabled: bool | None = None
) -> Embedder | None:
    """The embedder for memories when `enabled` (None: as `YUXI_MEMORY_EMBEDDINGS` says):
    the model `YUXI_EMBEDDING_*` names. Raises `MemoryConfigError` for a switch that
    is neither on nor off, or when it is on and that model is off."""
    env = os.environ if env is None else env
    if enabled is None:
        raw = env.get(MEMORY_EMBEDDINGS_ENV, "").strip().lower()
        if raw not in _ON | _OFF:
            raise MemoryConfigError(
                f"{MEMORY_EMBEDDINGS_ENV}={raw!r}: expected 1 (memory search by meaning too)"
                " or 0 (full text only)"
            )
        enabled = raw in _ON
    if not enabled:
        return None
    from ..knowledge._embedding import embedder_from_env

    embedder = embedder_from_env(env)
    if embedder is None:
        raise MemoryConfigError(
            "memory embeddings need an embedding model: YUXI_EMBEDDING_MODEL turns them off"
        )
    return embedder
