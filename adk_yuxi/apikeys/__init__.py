"""API keys of a host service: issued per user, stored hashed, revocable, expiring.

`ApiKeyStore.issue` returns the token once (`yxk_` and 43 random URL-safe characters);
only its sha256 is stored. `resolve` turns a presented token into the key's user id,
refusing an unknown, revoked or expired key or a disabled user with one
`InvalidApiKey`. An admin issues keys for anyone; everyone else only for themselves.
"""

from ._errors import ApiKeyError, ApiKeyForbidden, ApiKeyNotFound, InvalidApiKey
from ._schema import API_KEYS_PART
from ._store import TOKEN_PREFIX, ApiKey, ApiKeyStore, IssuedKey

__all__ = [
    "API_KEYS_PART",
    "TOKEN_PREFIX",
    "ApiKey",
    "ApiKeyError",
    "ApiKeyForbidden",
    "ApiKeyNotFound",
    "ApiKeyStore",
    "InvalidApiKey",
    "IssuedKey",
]
