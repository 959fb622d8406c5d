"""The direct fetcher's SSRF boundary: every refused address form, DNS answers mixing
public and private addresses, redirects, size, time and content-type limits.

Only loopback is ever connected to, and only through the explicit test allow-list; a
refused fetch is proven to have sent nothing to the page server."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import pytest

from adk_yuxi.testing import PageServer
from adk_yuxi.web import AddressPolicy, DirectFetcher, FetchError, StaticResolver, WebSettings

from ..documents.files import docx_bytes, pdf_bytes

LOOPBACK_ONLY = AddressPolicy(["127.0.0.1/32"])
HTML = (
    b"<html><head><title>Hello page</title></head>"
    b"<body><h1>Heading</h1><p>Body text.</p></body></html>"
)


@pytest.fixture(scope="module")
def pages() -> Iterator[PageServer]:
    with PageServer(
        {
            "/page": ("text/html; charset=utf-8", HTML),
            "/notes.txt": ("text/plain", "第一行\nsecond line".encode()),
            "/blob": ("application/octet-stream", b"\x00\x01"),
            "/image": ("image/png", b"\x89PNG"),
            "/report.pdf": ("application/pdf", pdf_bytes(["Quarterly figures", "Page two"])),
            "/locked.pdf": ("application/pdf", pdf_bytes(["secret"], encrypt=True)),
            "/broken.pdf": ("application/pdf", b"%PDF-1.4 garbage"),
            "/memo.docx": (
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                docx_bytes(["First paragraph."], "Memo"),
            ),
        }
    ) as server:
        yield server


REFUSED = [
    "127.0.0.1",
    "127.8.9.10",
    "0.0.0.0",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "192.0.0.8",
    "198.18.0.1",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.2.1",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "fec0::1",
    "ff02::1",
    "ff0e::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::127.0.0.1",
    "::8.8.8.8",
    "64:ff9b::7f00:1",
    "64:ff9b::a00:1",
    "64:ff9b:1::1",
    "2002:7f00:1::1",
    "2002:a00:1::1",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",
    "2001:db8::1",
]
ALLOWED = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "2606:4700::1111",
    "2a00:1450:4001::200e",
    "64:ff9b::808:808",
    "2002:808:808::1",
]


@pytest.mark.parametrize("address", REFUSED)
def test_default_policy_refuses(address: str) -> None:
    assert AddressPolicy().refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ALLOWED)
def test_default_policy_allows_public_unicast(address: str) -> None:
    assert AddressPolicy().refusal(ipaddress.ip_address(address)) is None


def test_the_allow_list_widens_only_what_it_names() -> None:
    assert LOOPBACK_ONLY.refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert LOOPBACK_ONLY.refusal(ipaddress.ip_address("127.0.0.2")) is not None
    assert LOOPBACK_ONLY.refusal(ipaddress.ip_address("::ffff:127.0.0.1")) is not None
    assert LOOPBACK_ONLY.refusal(ipaddress.ip_address("::1")) is not None


def test_settings_from_the_environment_never_widen_the_policy() -> None:
    from adk_yuxi.tools import ToolSettings
    from adk_yuxi.web import resolve_web_settings

    env = {"YUXI_WEB_FETCH_PROVIDER": "direct", "UNSAFE_FETCH_ALLOW_NETWORKS": "127.0.0.0/8"}
    settings = resolve_web_settings(ToolSettings(environ=env))
    assert settings.unsafe_fetch_allow_networks == ()


async def refused(fetcher: DirectFetcher, url: str, pages: PageServer) -> FetchError:
    before = sum(pages.hits.values())
    with pytest.raises(FetchError) as caught:
        await fetcher.fetch(url)
    assert sum(pages.hits.values()) == before, "a refused fetch reached the server"
    return caught.value


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "2130706433",
        "0x7f000001",
        "127.1",
        "0177.0.0.1",
        "localhost",
        "0",
    ],
)
async def test_loopback_in_every_spelling_is_refused_by_default(
    pages: PageServer, host: str
) -> None:
    error = await refused(DirectFetcher(), f"http://{host}:{pages.port}/page", pages)
    assert error.code in ("url_not_allowed", "fetch_failed")
    if error.code == "fetch_failed":
        # A spelling the resolver rejects outright never connects either.
        assert "resolve" in error.detail


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "gopher://127.0.0.1/",
        "http://user:pw@example.com/",
        "http://@example.com/",
        "https:///nohost",
        "http://exa mple.com/",
        "http://example.com:0/",
        "http://example.com:99999/",
        "javascript:alert(1)",
    ],
)
async def test_urls_refused_before_any_lookup(pages: PageServer, url: str) -> None:
    error = await refused(DirectFetcher(), url, pages)
    assert error.code == "url_not_allowed"
    assert error.to_response("web_fetch")["error"]["retryable"] is False


async def test_dns_answer_mixing_public_and_private_is_refused(pages: PageServer) -> None:
    resolver = StaticResolver({"mixed.test": ["93.184.216.34", "127.0.0.1"]})
    # Even with loopback allowed, one private answer next to a public one refuses the
    # name: the fetcher does not pick the answer it likes.
    fetcher = DirectFetcher(resolver=resolver, policy=AddressPolicy())
    error = await refused(fetcher, f"http://mixed.test:{pages.port}/page", pages)
    assert error.code == "url_not_allowed"
    resolver = StaticResolver({"mixed.test": ["127.0.0.1", "10.0.0.1"]})
    fetcher = DirectFetcher(resolver=resolver, policy=LOOPBACK_ONLY)
    error = await refused(fetcher, f"http://mixed.test:{pages.port}/page", pages)
    assert error.code == "url_not_allowed"


async def test_allowed_name_connects_to_the_checked_address(pages: PageServer) -> None:
    resolver = StaticResolver({"docs.test": ["127.0.0.1"]})
    page = await DirectFetcher(resolver=resolver, policy=LOOPBACK_ONLY).fetch(
        f"http://docs.test:{pages.port}/page"
    )
    assert page.title == "Hello page"
    assert "# Heading" in page.markdown and "Body text." in page.markdown
    assert pages.hosts[-1] == f"docs.test:{pages.port}"


async def test_redirects_are_rechecked(pages: PageServer) -> None:
    fetcher = DirectFetcher(policy=LOOPBACK_ONLY)
    for target in (
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        f"http://[::1]:{pages.port}/page",
        f"http://127.0.0.2:{pages.port}/page",
        "file:///etc/passwd",
        "http://user:pw@127.0.0.1/",
    ):
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(pages.url(f"/redirect?to={target}"))
        assert caught.value.code == "url_not_allowed", target
    hits = pages.hits.get("/page", 0)
    page = await fetcher.fetch(pages.url(f"/redirect?to={pages.url('/page')}"))
    assert page.final_url == pages.url("/page") and pages.hits["/page"] == hits + 1


async def test_redirect_count_is_bounded(pages: PageServer) -> None:
    with pytest.raises(FetchError) as caught:
        await DirectFetcher(policy=LOOPBACK_ONLY, max_redirects=3).fetch(pages.url("/loop"))
    assert caught.value.code == "fetch_failed" and "redirects" in caught.value.detail


async def test_size_cap_declared_and_streamed(pages: PageServer) -> None:
    fetcher = DirectFetcher(policy=LOOPBACK_ONLY, max_bytes=100_000)
    for path in ("/big?n=200000", "/chunked?n=200000"):
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(pages.url(path))
        assert caught.value.code == "too_large"
    page = await fetcher.fetch(pages.url("/chunked?n=50000"))
    assert len(page.markdown) >= 50_000


async def test_slow_body_hits_the_deadline(pages: PageServer) -> None:
    with pytest.raises(FetchError) as caught:
        await DirectFetcher(policy=LOOPBACK_ONLY, timeout_s=0.5).fetch(pages.url("/slow"))
    assert caught.value.code == "timeout" and caught.value.retryable


@pytest.mark.parametrize("path", ["/blob", "/image"])
async def test_content_types_outside_the_allow_list(pages: PageServer, path: str) -> None:
    with pytest.raises(FetchError) as caught:
        await DirectFetcher(policy=LOOPBACK_ONLY).fetch(pages.url(path))
    assert caught.value.code == "unsupported_content"


async def test_text_and_http_errors(pages: PageServer) -> None:
    fetcher = DirectFetcher.from_settings(
        WebSettings(fetch_provider="direct", unsafe_fetch_allow_networks=("127.0.0.1/32",))
    )
    page = await fetcher.fetch(pages.url("/notes.txt"))
    assert page.markdown == "第一行\nsecond line"
    with pytest.raises(FetchError) as caught:
        await fetcher.fetch(pages.url("/missing"))
    assert caught.value.code == "fetch_failed" and caught.value.status == 404


async def test_documents_go_through_the_document_converter(pages: PageServer) -> None:
    fetcher = DirectFetcher(policy=LOOPBACK_ONLY)
    pdf = await fetcher.fetch(pages.url("/report.pdf"))
    assert "Quarterly figures" in pdf.markdown and "Page two" in pdf.markdown
    memo = await fetcher.fetch(pages.url("/memo.docx"))
    assert "First paragraph." in memo.markdown
    for path, code in (("/locked.pdf", "unsupported_content"), ("/broken.pdf", "fetch_failed")):
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(pages.url(path))
        assert caught.value.code == code, path


async def test_conversion_has_its_own_deadline(pages: PageServer) -> None:
    import threading
    import time

    release = threading.Event()

    def slow(data: bytes, *, mime_type: str, charset: str | None, url: str) -> tuple[str, str]:
        release.wait(1.5)  # outlasts the deadline; let go once the test has its answer
        return "", "late"

    fetcher = DirectFetcher(policy=LOOPBACK_ONLY, converter=slow, convert_timeout_s=0.2)
    started = time.monotonic()
    with pytest.raises(FetchError) as caught:
        await fetcher.fetch(pages.url("/page"))
    assert caught.value.code == "timeout" and not caught.value.retryable
    assert time.monotonic() - started < 1.4
    release.set()
