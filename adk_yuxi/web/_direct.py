"""The direct fetcher: web_fetch without a provider, over httpx, behind the SSRF policy.

http/https only, no credentials in URLs, every redirect re-checked (and every connection
checked by `GuardedNetworkBackend`), a byte cap read as the body streams, one deadline
for the whole fetch, and an allow-list of content types.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterable, AsyncIterator
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx

from .._extras import missing_extra
from ._convert import ACCEPTED_TYPES, PageConverter, UnreadablePage, convert_page
from ._errors import FetchError, WebConfigError
from ._http import _ssl_context
from ._results import FetchedPage
from ._settings import WebSettings
from ._spans import record_exchange, record_failure
from ._ssrf import AddressPolicy, AddressRefused, GuardedNetworkBackend, Resolver, system_resolver

__all__ = ["DirectFetcher", "check_url"]

logger = logging.getLogger("adk_yuxi.web.direct")

PROVIDER = "direct"
USER_AGENT = "adk-yuxi-web-fetch/0.1 (+https://github.com/google/adk-python)"
MAX_URL = 8192


def _refuse(detail: str) -> FetchError:
    return FetchError("url_not_allowed", provider=PROVIDER, detail=detail, retryable=False)


def check_url(url: str) -> str:
    """The URL if it may be requested at all (before any address is known)."""
    if len(url) > MAX_URL or any(ord(c) < 0x21 or c == "\x7f" for c in url):
        raise _refuse("URL too long or with control characters or spaces")
    try:
        parts = urlsplit(url)
        port = parts.port
        httpx.URL(url)
    except (ValueError, httpx.InvalidURL) as exc:
        raise _refuse(f"unparsable URL: {exc}") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise _refuse(f"scheme {parts.scheme!r}")
    if not parts.hostname:
        raise _refuse("no host")
    if "%" in parts.netloc.rpartition("@")[2]:
        # An IPv6 zone id ("[fe80::1%25lo]") names an interface of this server: it would
        # be looked up as a name. Refused before any lookup.
        raise _refuse("an IPv6 zone id or an escaped host")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise _refuse("credentials in URL")
    if port == 0:
        raise _refuse("port 0")
    return url


class _Body(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._stream:
            yield part

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()


class _GuardedTransport(httpx.AsyncBaseTransport):
    """httpx over an httpcore pool whose connections go through the SSRF check."""

    def __init__(self, backend: GuardedNetworkBackend) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=_ssl_context(), network_backend=backend, max_connections=4
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        response = await self._pool.handle_async_request(core)
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def _content_type(header: str) -> tuple[str, str | None]:
    mime, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, value = param.strip().partition("=")
        if name.lower() == "charset" and value:
            charset = value.strip().strip('"')
    return mime.strip().lower(), charset


class DirectFetcher:
    name = PROVIDER

    def __init__(
        self,
        *,
        max_bytes: int = 10 * 1024 * 1024,
        timeout_s: float = 20.0,
        max_redirects: int = 5,
        policy: AddressPolicy | None = None,
        resolver: Resolver = system_resolver,
        converter: PageConverter = convert_page,
        allowed_types: frozenset[str] | None = None,
        convert_timeout_s: float = 60.0,
    ) -> None:
        self.max_bytes = max_bytes
        self.convert_timeout_s = convert_timeout_s
        self.timeout_s = timeout_s
        self.max_redirects = max_redirects
        self.policy = policy or AddressPolicy()
        self.resolver = resolver
        self.converter = converter
        self.allowed_types = allowed_types or ACCEPTED_TYPES

    @classmethod
    def from_settings(cls, settings: WebSettings) -> DirectFetcher:
        missing = missing_extra("markitdown", "web", "web_fetch's direct fetcher")
        if missing is not None:  # it converts pages to Markdown with markitdown
            raise WebConfigError(str(missing))
        return cls(
            max_bytes=settings.fetch_max_bytes,
            timeout_s=settings.fetch_timeout_s,
            max_redirects=settings.fetch_max_redirects,
            policy=AddressPolicy(settings.unsafe_fetch_allow_networks),
            convert_timeout_s=settings.fetch_convert_timeout_s,
        )

    def _error(self, code: str, detail: str, **fields: object) -> FetchError:
        error = FetchError(code, provider=PROVIDER, detail=detail, **fields)  # type: ignore[arg-type]
        record_failure(code)
        logger.info("web_fetch direct: %s", error)
        return error

    async def fetch(self, url: str) -> FetchedPage:
        check_url(url)
        try:
            async with asyncio.timeout(self.timeout_s):
                final_url, mime, charset, body = await self._download(url)
        except TimeoutError:
            raise self._error("timeout", f"no complete answer within {self.timeout_s}s") from None
        except AddressRefused as refused:
            raise self._error("url_not_allowed", refused.reason, retryable=False) from None
        except (httpcore.TimeoutException, httpx.TimeoutException) as exc:
            raise self._error("timeout", type(exc).__name__) from None
        except (
            httpcore.NetworkError,
            httpcore.ProtocolError,
            httpx.TransportError,
            httpx.DecodingError,  # a corrupt gzip or brotli body
        ) as exc:
            raise self._error("fetch_failed", f"{type(exc).__name__}: {exc}") from None
        try:
            # Conversion is CPU work in a worker thread (seconds per MiB of dense HTML);
            # past the deadline the call answers, though the thread runs to its end.
            async with asyncio.timeout(self.convert_timeout_s):
                title, markdown = await asyncio.to_thread(
                    self.converter, body, mime_type=mime, charset=charset, url=final_url
                )
        except TimeoutError:
            raise self._error(
                "timeout",
                f"conversion took over {self.convert_timeout_s}s",
                retryable=False,
                hint="The page is too large to convert in time; try a more specific page.",
            ) from None
        except UnreadablePage as exc:
            raise self._error(exc.code, str(exc), retryable=False) from None
        return FetchedPage(
            url=url, final_url=final_url, title=title, markdown=markdown, provider=PROVIDER
        )

    async def _download(self, url: str) -> tuple[str, str, str | None, bytes]:
        backend = GuardedNetworkBackend(self.policy, self.resolver)
        headers = {
            "User-Agent": USER_AGENT,
            "Accept": ", ".join(sorted(self.allowed_types)),
            "Accept-Encoding": "identity",
        }
        async with httpx.AsyncClient(
            transport=_GuardedTransport(backend),
            follow_redirects=False,
            trust_env=False,
            headers=headers,
            timeout=self.timeout_s,
        ) as client:
            current = url
            for _hop in range(self.max_redirects + 1):
                async with client.stream("GET", current) as response:
                    record_exchange(response.status_code, None, current, private=True)
                    if response.is_redirect:
                        location = response.headers.get("location", "")
                        current = check_url(urljoin(current, location))
                        continue
                    if response.status_code != 200:
                        raise self._error(
                            "fetch_failed",
                            f"HTTP {response.status_code}",
                            status=response.status_code,
                            retryable=response.status_code >= 500 or response.status_code == 429,
                        )
                    mime, charset = _content_type(response.headers.get("content-type", ""))
                    if mime not in self.allowed_types:
                        raise self._error(
                            "unsupported_content",
                            f"content type {mime or 'missing'!r}",
                            retryable=False,
                        )
                    declared = response.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > self.max_bytes:
                        raise self._too_large()
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in response.aiter_bytes():
                        size += len(chunk)
                        if size > self.max_bytes:
                            raise self._too_large()
                        chunks.append(chunk)
                    record_exchange(200, size, current, private=True)
                    return str(response.url), mime, charset, b"".join(chunks)
            raise self._error(
                "fetch_failed", f"more than {self.max_redirects} redirects", retryable=False
            )

    def _too_large(self) -> FetchError:
        return self._error(
            "too_large",
            f"more than {self.max_bytes} bytes",
            retryable=False,
            hint=f"The limit is {self.max_bytes} bytes.",
        )
