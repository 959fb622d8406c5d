"""One tiny embedding through the configured model: does the whole path answer?"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from ._embedding import EmbeddingError, embedder_from_env

__all__ = ["EmbeddingPing", "ping_embedder"]


@dataclass(frozen=True)
class EmbeddingPing:
    ok: bool
    detail: str
    seconds: float


def ping_embedder(env: Mapping[str, str] | None = None) -> EmbeddingPing:
    """Embeds one short question with the model `YUXI_EMBEDDING_*` names and says what
    answered (model, dimensions, time), or the one-line reason it could not."""
    started = time.monotonic()
    try:
        embedder = embedder_from_env(env)
        if embedder is None:
            return EmbeddingPing(False, "dense retrieval is off (YUXI_EMBEDDING_MODEL=none)", 0.0)
        vector = embedder.query("ping")
    except EmbeddingError as exc:
        return EmbeddingPing(False, str(exc), time.monotonic() - started)
    elapsed = time.monotonic() - started
    return EmbeddingPing(
        True, f"{embedder.name}: {len(vector)} dimensions, {elapsed:.2f} s", elapsed
    )
