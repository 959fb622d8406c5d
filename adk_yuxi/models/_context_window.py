"""How many tokens a model can take: configured, reported by its server, or read off its
refusal of a request that was too long.

A compaction budget above the model's context never triggers: the history grows until
every request is refused. So the budget follows the context where it is known, from
(first found) `YUXI_MODEL_CONTEXT`, the server's own report (llama.cpp's `/props`
`n_ctx`, vLLM's `/v1/models` `max_model_len`, or a `context_length` field there), or
the number a context-length refusal names.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from adk_yuxi.errors import YuxiError

__all__ = [
    "MODEL_CONTEXT_ENV",
    "ContextSettingError",
    "configured_context_window",
    "context_from_error",
    "is_context_overflow",
    "probe_context_window",
]

MODEL_CONTEXT_ENV = "YUXI_MODEL_CONTEXT"
_PROBE_SECONDS = 3.0
_MIN_CONTEXT, _MAX_CONTEXT = 256, 100_000_000

# How OpenAI, vLLM, llama.cpp, llama-cpp-python, Ollama and others word the refusal.
_OVERFLOW = re.compile(
    r"context_length_exceeded|exceed_context_size|maximum context length|context window"
    r"|context size|context length|n_ctx|max_model_len|prompt is too long|too many tokens",
    re.I,
)
_NAMED_SIZE = (
    re.compile(r"maximum context length is (\d[\d,]*)", re.I),
    re.compile(r"context window of (\d[\d,]*)", re.I),
    re.compile(r"context (?:size|length)(?: is| of)? \(?(\d[\d,]*)", re.I),
    re.compile(r"n_ctx\W{0,4}(\d[\d,]*)", re.I),
    re.compile(r"max_model_len\W{0,4}(\d[\d,]*)", re.I),
)


def _tokens(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.replace(",", "").strip()
        if not value.isdigit():
            return None
    if isinstance(value, int | str):
        number = int(value)
        return number if _MIN_CONTEXT <= number <= _MAX_CONTEXT else None
    return None


class ContextSettingError(YuxiError, ValueError):
    """`YUXI_MODEL_CONTEXT` is set to something that is not a token count."""


def configured_context_window() -> int | None:
    """`YUXI_MODEL_CONTEXT` as a token count (None when unset); raises
    `ContextSettingError` for a value that is not one."""
    raw = os.environ.get(MODEL_CONTEXT_ENV, "").strip()
    if not raw:
        return None
    digits = raw[:-1] if raw[-1:] in ("k", "K") else raw
    scale = 1024 if digits != raw else 1
    tokens = _tokens(int(digits) * scale) if digits.isdigit() else None
    if tokens is None:
        raise ContextSettingError(
            f"{MODEL_CONTEXT_ENV}={raw!r} is not a context size in tokens"
            f" ({_MIN_CONTEXT} to {_MAX_CONTEXT}, e.g. '8192' or '8k')"
        )
    return tokens


def is_context_overflow(status: int, message: str) -> bool:
    """Whether an HTTP refusal says the request does not fit the model's context."""
    return status in (400, 413, 422, 500) and bool(_OVERFLOW.search(message))


def context_from_error(message: str, body: object = None) -> int | None:
    """The context size a refusal names, if it names one (llama.cpp puts `n_ctx` in the
    error body; OpenAI and vLLM write it into the message)."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and (found := _tokens(error.get("n_ctx"))) is not None:
            return found
    for pattern in _NAMED_SIZE:
        match = pattern.search(message)
        if match and (found := _tokens(match.group(1))) is not None:
            return found
    return None


def _root(base_url: str) -> str:
    """The server's root: the base URL without a trailing `/v1` (llama.cpp serves
    `/props` there)."""
    parts = urlsplit(base_url.rstrip("/"))
    path = parts.path.removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _from_models(listing: Any, model: str) -> int | None:
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("id") not in (model, None):
            continue
        found_meta = entry.get("meta")
        meta: dict[str, Any] = found_meta if isinstance(found_meta, dict) else {}
        for value in (
            entry.get("max_model_len"),
            entry.get("context_length"),
            entry.get("max_context_length"),
            entry.get("context_window"),
            meta.get("n_ctx"),
        ):
            if (found := _tokens(value)) is not None:
                return found
    return None


def _from_props(props: Any) -> int | None:
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    nested = settings.get("n_ctx") if isinstance(settings, dict) else None
    return _tokens(nested) or _tokens(props.get("n_ctx"))


async def probe_context_window(base_url: str, model: str, api_key: str | None) -> int | None:
    """The context the server reports for `model`, or None (no such report, or no
    answer within a few seconds: the probe never fails a turn)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(timeout=_PROBE_SECONDS, headers=headers) as client:
        for url, read in (
            (f"{base_url.rstrip('/')}/models", lambda body: _from_models(body, model)),
            (f"{_root(base_url)}/props", _from_props),
        ):
            try:
                response = await client.get(url)
                if response.status_code == 200 and (found := read(response.json())):
                    return found
            except (httpx.HTTPError, ValueError):
                continue
    return None
