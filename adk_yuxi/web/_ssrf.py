"""The SSRF boundary of the direct fetcher: which addresses a fetch may connect to.

Every address a host name resolves to is checked, and the connection is made to an
address that passed (never by resolving the name again), so DNS answers mixing public
and private addresses, or changing between check and connect, cannot reach inside. IPv6
forms that embed an IPv4 address (mapped, compatible, SIIT, NAT64, 6to4, Teredo, ISATAP)
are judged by the IPv4 address they carry. The check sits in the connection layer, so redirects and
every other connection the client makes pass through it too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import httpcore

from adk_yuxi.errors import YuxiError

__all__ = [
    "AddressPolicy",
    "AddressRefused",
    "GuardedNetworkBackend",
    "IPAddress",
    "Resolver",
    "StaticResolver",
    "system_resolver",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]
"""Resolves a host name (or literal) to every address it answers with."""

_V4_DENY = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
)
_V6_COMPAT = ipaddress.IPv6Network("::/96")
_V6_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_V6_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_V6_SIIT = ipaddress.IPv6Network("::ffff:0:0:0/96")  # IPv4-translated (RFC 6145)
_ISATAP_IDS = (0x00005EFE, 0x02005EFE)  # interface id 0[2]00:5efe:a.b.c.d (RFC 5214)


class AddressRefused(YuxiError, OSError):
    """A connection the policy refused; raised in the connection layer, before any byte
    is sent, and mapped to `FetchError(url_not_allowed)` by the fetcher."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"{host}: {reason}")
        self.host = host
        self.reason = reason


def _v4_refusal(address: ipaddress.IPv4Address) -> str | None:
    if any(address in network for network in _V4_DENY) or not address.is_global:
        return f"{address} is not a public address"
    return None


def _v6_refusal(address: ipaddress.IPv6Address) -> str | None:
    mapped = address.ipv4_mapped
    if mapped is not None:
        return _v4_refusal(mapped)
    if address in _V6_COMPAT or address in _V6_NAT64_LOCAL:
        return f"{address} is a deprecated or local-use IPv4-embedding address"
    if address in _V6_NAT64 or address in _V6_SIIT:
        return _v4_refusal(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if (int(address) >> 32) & 0xFFFFFFFF in _ISATAP_IDS:
        return _v4_refusal(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.sixtofour is not None:
        return _v4_refusal(address.sixtofour)
    if address.teredo is not None:
        server, client = address.teredo
        return _v4_refusal(server) or _v4_refusal(client)
    if (
        address.is_multicast
        or address.is_site_local
        or address.is_link_local
        or address.is_loopback
        or address.is_unspecified
        or address.is_private
        or not address.is_global
    ):
        return f"{address} is not a public address"
    return None


class AddressPolicy:
    """Public unicast addresses only. `allow` widens it by explicit networks, for tests
    that must reach a loopback server; the default refuses them."""

    def __init__(self, allow: Iterable[str] = ()) -> None:
        self._allow = tuple(ipaddress.ip_network(n, strict=False) for n in allow)

    def refusal(self, address: IPAddress) -> str | None:
        """Why `address` may not be connected to, or None."""
        if any(address.version == n.version and address in n for n in self._allow):
            return None
        if isinstance(address, ipaddress.IPv4Address):
            return _v4_refusal(address)
        return _v6_refusal(address)


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Every address the system resolver gives for `host` (literals included)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: dict[IPAddress, None] = {}
    for _family, _type, _proto, _name, sockaddr in infos:
        # A scoped IPv6 address comes back as "fe80::1%eth0"; the scope is not part of it.
        addresses[ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])] = None
    return list(addresses)


class StaticResolver:
    """A resolver from a fixed table (names to address lists), for tests and for hosts
    that pin names; a name not in the table falls back to `fallback`, or fails."""

    def __init__(
        self, table: Mapping[str, Sequence[str]], *, fallback: Resolver | None = None
    ) -> None:
        self._table = {k.lower(): [ipaddress.ip_address(a) for a in v] for k, v in table.items()}
        self._fallback = fallback

    async def __call__(self, host: str, port: int) -> list[IPAddress]:
        found = self._table.get(host.lower().rstrip("."))
        if found is not None:
            return list(found)
        try:
            return [ipaddress.ip_address(host.strip("[]"))]
        except ValueError:
            pass
        if self._fallback is None:
            raise OSError(f"cannot resolve {host!r}")
        return await self._fallback(host, port)


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """httpcore's connection layer with the policy in front: resolve, check every
    answer, connect to a checked address; TLS still verifies the original host name."""

    def __init__(
        self,
        policy: AddressPolicy,
        resolver: Resolver = system_resolver,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await self._resolver(host, port)
        except (OSError, ValueError) as exc:
            raise httpcore.ConnectError(f"cannot resolve {host!r}: {exc}") from None
        if not addresses:
            raise httpcore.ConnectError(f"{host!r} has no address")
        for address in addresses:
            reason = self._policy.refusal(address)
            if reason is not None:
                raise AddressRefused(host, reason)
        error: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AddressRefused(path, "unix sockets are never fetched")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
