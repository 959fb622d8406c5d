"""Per-call delegation: a short-lived signed token naming the user, the session and the
knowledge bases selected for it, minted by the agent runtime, checked by the server.

ES256 (P-256) through joserfc: the runtime holds the private key, the knowledge server
only the public one, so the server can verify but never mint. No other credential is
accepted: there is no shared secret or admin token to configure. A verifier remembers
the tokens it verified (the same bytes always verify the same way) and re-checks only
their expiry when one comes again; rights are never cached here.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, import_key

from ._errors import DelegationError

__all__ = [
    "DEFAULT_AUDIENCE",
    "MAX_TTL_SECONDS",
    "Delegation",
    "DelegationKeys",
    "DelegationSigner",
    "DelegationVerifier",
    "load_verifier",
]

DEFAULT_AUDIENCE = "yuxi-knowledge"
MAX_TTL_SECONDS = 300
_ALG = "ES256"
_MAX_KBS = 256
ALL_READABLE = "*"
"""The `kbs` claim of a delegation over whatever the user may read at each call."""


class DelegationScopeError(ValueError):
    """The selection cannot be carried by a delegation (too many named bases)."""


_REMEMBERED = 4096  # verified tokens kept per verifier (each lives at most 5 minutes)


@dataclass(frozen=True)
class Delegation:
    """What one verified token says: who, in which session, over which bases."""

    user_id: str
    session_id: str
    kb_ids: tuple[str, ...] | None
    """The bases named, or None: whatever the user may read at each call."""
    audience: str
    expires_at: int
    token_id: str


class DelegationSigner:
    def __init__(
        self,
        key: ECKey,
        *,
        audience: str = DEFAULT_AUDIENCE,
        issuer: str = "yuxi-runtime",
        ttl_seconds: int = 120,
    ) -> None:
        if not key.is_private:
            raise ValueError("a delegation signer needs the private key")
        if not 1 <= ttl_seconds <= MAX_TTL_SECONDS:
            raise ValueError(f"a delegation lives 1-{MAX_TTL_SECONDS} seconds")
        self._key = key
        self.audience = audience
        self.issuer = issuer
        self.ttl_seconds = ttl_seconds

    def mint(
        self,
        user_id: str,
        session_id: str,
        kb_ids: Iterable[str] | None,
        *,
        now: float | None = None,
    ) -> str:
        """A token over ``kb_ids``, or with None over whatever the user may read at each
        call (`ALL_READABLE`); raises `DelegationScopeError` above 256 named bases."""
        issued = int(time.time() if now is None else now)
        kbs: list[str] | str = ALL_READABLE if kb_ids is None else sorted(set(kb_ids))
        if len(kbs) > _MAX_KBS and kbs != ALL_READABLE:
            raise DelegationScopeError(
                f"a delegation names at most {_MAX_KBS} knowledge bases, and this selection"
                f" has {len(kbs)}; leave the agent's knowledges unset (every base the user"
                " may read) or narrow it"
            )
        claims = {
            "iss": self.issuer,
            "sub": user_id,
            "sid": session_id,
            "kbs": kbs,
            "aud": self.audience,
            "iat": issued,
            "nbf": issued,
            "exp": issued + self.ttl_seconds,
            "jti": uuid.uuid4().hex,
        }
        return jwt.encode({"alg": _ALG, "typ": "JWT"}, claims, self._key, algorithms=[_ALG])


def _str_list(value: Any) -> tuple[str, ...] | None:
    if value == ALL_READABLE:
        return None
    if not isinstance(value, list) or len(value) > _MAX_KBS:
        raise DelegationError("the delegation's knowledge base selection is malformed")
    if not all(isinstance(item, str) and item for item in value):
        raise DelegationError("the delegation's knowledge base selection is malformed")
    return tuple(value)


class DelegationVerifier:
    """Checks delegation tokens and remembers the verified ones until they expire.

    ``clock`` (seconds since the epoch) is the one time source of every expiry check, the
    remembered tokens' and the full check's; a test passes its own instead of sleeping.
    """

    def __init__(
        self,
        public_key: ECKey,
        *,
        audience: str = DEFAULT_AUDIENCE,
        issuer: str = "yuxi-runtime",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._key = public_key
        self.audience = audience
        self.issuer = issuer
        self._clock = clock
        self._claims = jwt.JWTClaimsRegistry(
            now=lambda: int(self._clock()),
            leeway=0,
            iss={"essential": True, "value": issuer},
            aud={"essential": True, "value": audience},
            sub={"essential": True},
            exp={"essential": True},
            iat={"essential": True},
            jti={"essential": True},
        )
        self._verified: dict[str, Delegation] = {}
        self._lock = threading.Lock()

    def verify(self, token: str | None) -> Delegation:
        if not token:
            raise DelegationError("this call carries no delegation token")
        with self._lock:
            known = self._verified.get(token)
        # Strictly before `exp`: at the boundary the full check below decides, as it
        # does for every token it has not seen.
        if known is not None and self._clock() < known.expires_at:
            return known
        delegation = self._verify(token)
        with self._lock:
            self._verified.pop(token, None)
            if len(self._verified) >= _REMEMBERED:
                now = self._clock()
                for old in [t for t, d in self._verified.items() if d.expires_at <= now]:
                    del self._verified[old]
                while len(self._verified) >= _REMEMBERED:
                    del self._verified[next(iter(self._verified))]
            self._verified[token] = delegation
        return delegation

    def _verify(self, token: str) -> Delegation:
        try:
            decoded = jwt.decode(token, self._key, algorithms=[_ALG])
            self._claims.validate(decoded.claims)
        except JoseError as exc:
            raise DelegationError(f"the delegation token was refused ({exc.error})") from exc
        except (ValueError, TypeError) as exc:
            raise DelegationError("the delegation token is malformed") from exc
        claims = decoded.claims
        exp, iat = claims.get("exp"), claims.get("iat")
        if not isinstance(exp, int) or not isinstance(iat, int) or exp - iat > MAX_TTL_SECONDS:
            raise DelegationError(f"a delegation may live at most {MAX_TTL_SECONDS} seconds")
        sub, sid, jti = claims.get("sub"), claims.get("sid"), claims.get("jti")
        if not all(isinstance(v, str) and v for v in (sub, sid, jti)):
            raise DelegationError("the delegation token is malformed")
        return Delegation(
            user_id=str(sub),
            session_id=str(sid),
            kb_ids=_str_list(claims.get("kbs")),
            audience=self.audience,
            expires_at=exp,
            token_id=str(jti),
        )


class DelegationKeys:
    """The runtime's signing key pair, generated once and kept in a private file."""

    def __init__(self, key: ECKey) -> None:
        self._key = key

    @classmethod
    def generate(cls) -> DelegationKeys:
        return cls(ECKey.generate_key("P-256"))

    @classmethod
    def load_or_create(cls, path: str | os.PathLike[str]) -> DelegationKeys:
        """Reads the key file, or creates it readable by its owner only."""
        file = Path(path)
        if file.exists():
            key = _read_key(file)
            if not key.is_private:
                raise DelegationError(f"{file} holds a public key only; signing needs the private")
            return cls(key)
        keys = cls.generate()
        file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(keys._key.as_dict(private=True), out)
        return keys

    def public_jwk(self) -> dict[str, Any]:
        return dict(self._key.as_dict(private=False))

    def signer(self, **kwargs: Any) -> DelegationSigner:
        return DelegationSigner(self._key, **kwargs)

    def verifier(self, **kwargs: Any) -> DelegationVerifier:
        return DelegationVerifier(public_verifying_key(self.public_jwk()), **kwargs)


def _read_key(file: Path) -> ECKey:
    """The EC key of a JWK file, or one `DelegationError` line saying what is wrong."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        key = import_key(data, "EC") if isinstance(data, dict) else None
    except OSError as exc:
        raise DelegationError(f"cannot read the key file {file}: {exc.strerror}") from None
    except (ValueError, JoseError) as exc:  # not JSON, or not a usable EC key
        raise DelegationError(f"{file} is not an EC key in JWK form: {exc}") from None
    if not isinstance(key, ECKey):
        raise DelegationError(f"{file} is not an EC key in JWK form")
    return key


def load_verifier(path: str | os.PathLike[str], **kwargs: Any) -> DelegationVerifier:
    """A verifier from a JWK file holding the runtime's public key (or its private key,
    of which only the public half is used): what a knowledge server needs, no more."""
    key = _read_key(Path(path))
    return DelegationVerifier(public_verifying_key(key.as_dict(private=False)), **kwargs)


def public_verifying_key(jwk: dict[str, Any]) -> ECKey:
    """A public key from its JWK; a private one is stripped to its public half."""
    key = import_key({k: v for k, v in jwk.items() if k != "d"}, "EC")
    if not isinstance(key, ECKey):
        raise DelegationError("the verifying key must be an EC key")
    return key
