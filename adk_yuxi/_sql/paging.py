"""Opaque keyset page tokens, one codec for every paged listing of ours.

A token is the sort key of the last row seen, as URL-safe base64 of compact JSON; a
token that does not decode to a key of the expected shape is a clear error naming the
listing that hands out good ones.
"""

from __future__ import annotations

import base64
import binascii
import json

from .errors import InvalidPageTokenError

__all__ = ["decode_page_token", "encode_page_token"]


def encode_page_token(at: float, *ids: str) -> str:
    """A token for the position after the row whose sort key is (at, *ids)."""
    raw = json.dumps([at, *ids], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_page_token(token: str, *, ids: int, listing: str) -> tuple[float, tuple[str, ...]]:
    """The (at, ids) position a token stands for; anything else is `InvalidPageTokenError`."""
    try:
        value = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if not isinstance(value, list) or len(value) != ids + 1:
            raise ValueError("wrong shape")
        return float(value[0]), tuple(str(v) for v in value[1:])
    except (ValueError, TypeError, binascii.Error) as exc:
        raise InvalidPageTokenError(
            f"Invalid page token {token!r}: pass back a next_page_token from {listing}."
        ) from exc
