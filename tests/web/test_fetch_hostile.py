"""Pages that are not what they say, through the direct fetcher and the real web_fetch
tool on loopback: bytes are converted only within the declared type's family and never
OCR'd, a corrupt compressed body is a fetch failure, the header charset holds for XHTML,
and every IPv4-embedding or scoped address spelling is refused."""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_yuxi.testing import PageServer
from adk_yuxi.tools import ToolSettings
from adk_yuxi.web import AddressPolicy, DirectFetcher, FetchError, WebSettings, bind_web_fetch
from tests._profiles import examples

from ..documents.ocr_pages import image_bytes, scanned_pdf_bytes

PNG = image_bytes(["Invoice 4711 total 99"])
XHTML = (
    '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Caf\xe9'
    "</title></head><body><p>Cr\xe8me br\xfbl\xe9e au caf\xe9</p></body></html>"
).encode("iso-8859-1")


@pytest.fixture(scope="module")
def pages() -> Iterator[PageServer]:
    with PageServer(
        {
            "/img.txt": ("text/plain", PNG),
            "/img.html": ("text/html", PNG),
            "/img.pdf": ("application/pdf", PNG),
            "/scan.pdf": ("application/pdf", scanned_pdf_bytes([["Contract page one"]])),
            "/gz": ("text/html", b"\x1f\x8b\x08\x00garbage that is not deflate"),
            "/ok.gz": ("text/html", gzip.compress(b"<html><body><p>zipped ok</p></body></html>")),
            "/latin.xhtml": ("application/xhtml+xml; charset=iso-8859-1", XHTML),
        }
    ) as server:
        server.page_headers["/gz"] = {"Content-Encoding": "gzip"}
        server.page_headers["/ok.gz"] = {"Content-Encoding": "gzip"}
        yield server


async def web_fetch(url: str) -> dict[str, Any]:
    settings = WebSettings(fetch_provider="direct", unsafe_fetch_allow_networks=("127.0.0.1/32",))
    tool = bind_web_fetch(ToolSettings(settings, environ={}))
    return await tool.func(url=url)  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("path", ["/img.txt", "/img.html", "/img.pdf"])
async def test_an_image_under_another_type_is_refused_unread(pages: PageServer, path: str) -> None:
    result = await web_fetch(pages.url(path))
    assert result["error"]["code"] == "unsupported_content"


async def test_a_scanned_pdf_is_never_ocrd(pages: PageServer) -> None:
    result = await web_fetch(pages.url("/scan.pdf"))
    assert "Contract" not in str(result)


async def test_a_corrupt_compressed_body_is_a_fetch_failure(pages: PageServer) -> None:
    assert (await web_fetch(pages.url("/gz")))["error"]["code"] == "fetch_failed"
    assert "zipped ok" in (await web_fetch(pages.url("/ok.gz")))["content"]


async def test_the_header_charset_holds_for_xhtml(pages: PageServer) -> None:
    result = await web_fetch(pages.url("/latin.xhtml"))
    assert "Crème brûlée au café" in result["content"]


@pytest.mark.parametrize(
    "address",
    [
        "::ffff:0:7f00:1",
        "::ffff:0:a00:1",
        "::ffff:0:a9fe:a9fe",
        "fe80::5efe:a00:1",
        "2001:db8::200:5efe:c0a8:101",
        "2a00:1450::5efe:7f00:1",
    ],
)
def test_siit_and_isatap_forms_are_judged_by_their_ipv4(address: str) -> None:
    assert AddressPolicy().refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "url", ["http://[fe80::1%25lo]/", "http://[fe80::1%25eth0]:80/x", "http://%31%32%37.0.0.1/"]
)
async def test_zone_ids_are_refused_before_any_lookup(pages: PageServer, url: str) -> None:
    def no_lookup(host: str, port: int) -> Any:
        raise AssertionError(f"looked up {host!r}")

    with pytest.raises(FetchError) as caught:
        await DirectFetcher(resolver=no_lookup).fetch(url)
    assert caught.value.code == "url_not_allowed"


# --- property: every spelling of a private address is refused, of a public one never


def _private_v4() -> st.SearchStrategy[ipaddress.IPv4Address]:
    networks = ["10.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
                "192.168.0.0/16", "100.64.0.0/10", "0.0.0.0/8", "224.0.0.0/4"]  # fmt: skip
    return st.sampled_from(networks).flatmap(
        lambda n: st.integers(0, ipaddress.IPv4Network(n).num_addresses - 1).map(
            lambda i, n=n: ipaddress.IPv4Network(n)[i]
        )
    )


PUBLIC_V4 = st.sampled_from(["8.8.8.8", "1.1.1.1", "93.184.216.34", "151.101.1.69"]).map(
    ipaddress.IPv4Address
)


def embeddings(v4: ipaddress.IPv4Address) -> list[ipaddress.IPv6Address]:
    n = int(v4)
    return [
        ipaddress.IPv6Address((0xFFFF << 32) | n),  # mapped
        ipaddress.IPv6Address((0xFFFF << 48) | n),  # SIIT
        ipaddress.IPv6Address((0x64FF9B << 96) | n),  # NAT64
        ipaddress.IPv6Address((0x2002 << 112) | (n << 80) | 1),  # 6to4
        ipaddress.IPv6Address((0x2A00_1450 << 96) | (0x5EFE << 32) | n),  # ISATAP
    ]


@given(_private_v4())
@settings(max_examples=examples(200), deadline=None)
def test_every_embedding_of_a_private_address_is_refused(v4: ipaddress.IPv4Address) -> None:
    policy = AddressPolicy()
    assert policy.refusal(v4) is not None
    for v6 in embeddings(v4):
        assert policy.refusal(v6) is not None, v6


@given(PUBLIC_V4)
@settings(max_examples=examples(20), deadline=None)
def test_embeddings_of_public_addresses_are_judged_public(v4: ipaddress.IPv4Address) -> None:
    policy = AddressPolicy()
    assert policy.refusal(v4) is None
    mapped, siit, nat64, sixtofour, _isatap = embeddings(v4)
    for v6 in (mapped, siit, nat64, sixtofour):
        assert policy.refusal(v6) is None, v6


@given(_private_v4(), st.sampled_from(["dotted", "int", "hex", "octal", "mapped"]))
@settings(max_examples=examples(60), deadline=None)
def test_private_spellings_in_urls_never_connect(v4: ipaddress.IPv4Address, form: str) -> None:
    n = int(v4)
    host = {
        "dotted": str(v4),
        "int": str(n),
        "hex": hex(n),
        "octal": ".".join(f"0{int(o):o}" for o in str(v4).split(".")),
        "mapped": f"[::ffff:{v4}]",
    }[form]
    with pytest.raises(FetchError) as caught:
        asyncio.run(DirectFetcher(timeout_s=5).fetch(f"http://{host}:9/"))
    assert caught.value.code in ("url_not_allowed", "fetch_failed")
    if caught.value.code == "fetch_failed":
        assert "resolve" in caught.value.detail
