"""The HTTP exchange of `OpenAIEmbedder`, kept safe against the endpoint: no secret (the
API key, a password in the URL) in any message or log line, whatever the endpoint or
the HTTP library repeats of them, and an answer read as a stream under a byte cap and
one deadline, so an endless or trickling body cannot fill memory or hold a query."""

from __future__ import annotations

import base64
import json
import time
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ._errors import KnowledgeError

__all__ = [
    "Answer",
    "EmbeddingError",
    "EmbeddingInputError",
    "Secrets",
    "header_safe",
    "post_json",
]

BODY_BASE = 1 << 20  # bytes an answer may hold beyond its vectors' share
BODY_PER_TEXT = 256 << 10  # a text's share: 8,192 dimensions written as long decimals


class EmbeddingError(KnowledgeError):
    """The embedding model is misconfigured, unreachable, or answered something unusable."""


class EmbeddingInputError(EmbeddingError):
    """The endpoint refused these texts (a 400, 413 or 422: a provider's content filter,
    an input too long), or they could not be sent: the texts' fault, not the endpoint's,
    so a query answers lexically without skipping the model for everyone's next ones."""

    REFUSING = frozenset({400, 413, 422})


def header_safe(value: str) -> bool:
    """Printable ASCII without blanks: what an Authorization header can carry as is."""
    return value.isascii() and value.isprintable() and " " not in value


class Secrets:
    """What must never be shown of an endpoint's settings, and its URL as shown."""

    def __init__(self, base_url: str, api_key: str) -> None:
        parts = urlsplit(base_url)
        secrets = {api_key}
        host = parts.netloc.rpartition("@")[2]
        # What is asked: the URL without its user, who goes as Basic auth instead (as
        # httpx would send it), so httpx's own log line of each request shows no password.
        self.plain = urlunsplit(parts._replace(netloc=host))
        self.user: tuple[str, str] | None = None
        if "@" in parts.netloc:  # a user alone may be the token: all of it is secret
            self.user = (unquote(parts.username or ""), unquote(parts.password or ""))
            secrets |= {parts.username or "", parts.password or "", *self.user}
            secrets.add(base64.b64encode(":".join(self.user).encode()).decode())
        # Each as written, and as JSON or a repr would escape it.
        forms = {f for s in secrets for f in (s, json.dumps(s)[1:-1], repr(s)[1:-1])}
        self._forms = sorted((f for f in forms if f), key=len, reverse=True)
        netloc = f"***@{host}" if "@" in parts.netloc else host
        self.url = urlunsplit(parts._replace(netloc=netloc))

    def redact(self, text: str) -> str:
        for form in self._forms:
            text = text.replace(form, "***")
        return text


Answer = tuple[int, bytes]  # (status, body)


def post_json(client: Any, url: str, body: dict[str, Any], limit: int, seconds: float) -> Answer:
    """The endpoint's status and body, read under ``limit`` bytes and ``seconds`` in all
    (a read may wait the client's own timeout once more). Raises `EmbeddingError` with
    a message not yet redacted: the caller redacts every message it raises."""
    import httpx

    deadline = time.monotonic() + seconds
    try:
        with client.stream("POST", url, json=body) as reply:
            chunks: list[bytes] = []
            size = 0
            for chunk in reply.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise EmbeddingError(f"answered more than {limit} bytes")
                if time.monotonic() > deadline:
                    raise EmbeddingError(f"sent no full answer within {seconds:g} s")
                chunks.append(chunk)
            return reply.status_code, b"".join(chunks)
    except httpx.HTTPError as exc:
        raise EmbeddingError(f"unreachable: {type(exc).__name__}: {exc}") from None
    except UnicodeEncodeError:  # a lone surrogate: no JSON in UTF-8 carries it
        raise EmbeddingInputError("not asked: a text is not valid Unicode") from None
