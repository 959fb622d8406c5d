"""web_fetch and OCR throughput, each against an anchor measured in the same run.

1. A 1 MiB HTML page served on loopback, fetched by the direct fetcher (HTTP, the SSRF
   checks, the byte cap, conversion through `adk_yuxi.documents`) against the same bytes
   converted by markitdown alone (its HTML converter, no network): the ratio is what the
   fetch path adds to the conversion it cannot avoid.
2. Scanned PDF pages (rendered Chinese and English text, no text layer) through OCR,
   against the same pages as a text-layer PDF: pages per second for both, and the ratio.

    python -m bench.bench_web_documents [--rounds R] [--pages N]
"""

from __future__ import annotations

import argparse
import asyncio
import io

from adk_yuxi.documents import convert_document
from adk_yuxi.testing import PageServer
from adk_yuxi.web import AddressPolicy, DirectFetcher
from bench._timing import format_table, median_rate, timed_rounds


def html_page(size: int = 1024 * 1024) -> bytes:
    """An article-like page: headings, paragraphs with links, lists and a table."""
    section = (
        "<h2>Section {i}</h2><p>Paragraph {i} explains <a href='/p/{i}'>a linked topic</a>"
        " with <b>bold</b> and <i>italic</i> words, 中文内容与 English text mixed.</p>"
        "<ul><li>First point {i}</li><li>Second point {i}</li></ul>"
        "<table><tr><th>Key</th><th>Value</th></tr><tr><td>k{i}</td><td>v{i}</td></tr></table>"
    )
    parts = ["<html><head><title>Bench page</title></head><body><h1>Bench</h1>"]
    i = 0
    while sum(len(p) for p in parts) < size:
        parts.append(section.format(i=i))
        i += 1
    parts.append("</body></html>")
    return "".join(parts).encode()


def markitdown_alone(data: bytes) -> str:
    from markitdown import MarkItDown, StreamInfo

    result = MarkItDown(enable_plugins=False).convert_stream(
        io.BytesIO(data), stream_info=StreamInfo(mimetype="text/html", extension=".html")
    )
    return result.markdown


async def bench_fetch(rounds: int) -> list[list[str]]:
    page = html_page()
    with PageServer({"/big.html": ("text/html; charset=utf-8", page)}) as server:
        fetcher = DirectFetcher(policy=AddressPolicy(["127.0.0.1/32"]))
        url = server.url("/big.html")

        async def anchor() -> int:
            await asyncio.to_thread(markitdown_alone, page)
            return 1

        async def fetch() -> int:
            await fetcher.fetch(url)
            return 1

        samples = await timed_rounds(
            {"markitdown alone": anchor, "web_fetch direct": fetch}, rounds
        )
    base = median_rate(samples["markitdown alone"])
    return [
        [name, f"{median_rate(s) * 1000:.0f} ms", f"{median_rate(s) / base:.2f}"]
        for name, s in samples.items()
    ]


async def bench_ocr(rounds: int, pages: int) -> list[list[str]]:
    from tests.documents.files import pdf_bytes
    from tests.documents.ocr_pages import scanned_pdf_bytes

    lines = [[f"季度报告 第{i + 1}页", f"Quarterly report page {i + 1}"] for i in range(pages)]
    scanned = scanned_pdf_bytes(lines)
    typed = pdf_bytes([f"Quarterly report page {i + 1}" for i in range(pages)])
    convert_document(scanned, name="warm.pdf")  # loads the engine once, outside the timing

    async def text_layer() -> int:
        await asyncio.to_thread(convert_document, typed, name="typed.pdf")
        return pages

    async def ocr() -> int:
        await asyncio.to_thread(convert_document, scanned, name="scan.pdf")
        return pages

    samples = await timed_rounds({"text-layer PDF": text_layer, "scanned PDF (OCR)": ocr}, rounds)
    base = median_rate(samples["text-layer PDF"])
    return [
        [name, f"{1 / median_rate(s):.2f}", f"{median_rate(s) / base:.1f}"]
        for name, s in samples.items()
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pages", type=int, default=4)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rounds, pages = (3, 2) if args.quick else (args.rounds, args.pages)
    fetch_rows = asyncio.run(bench_fetch(rounds))
    print("1 MiB HTML page to Markdown (median per page; ratio to markitdown alone)")
    print(format_table(["contender", "time", "ratio"], fetch_rows))
    ocr_rows = asyncio.run(bench_ocr(rounds, pages))
    print(f"\n{pages}-page PDF to Markdown (pages per second; time ratio to the text layer)")
    print(format_table(["contender", "pages/s", "ratio"], ocr_rows))


if __name__ == "__main__":
    main()
