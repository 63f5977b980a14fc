"""The docs hang together: the README is a landing page, docs/index.md reaches every doc, and every
relative link in the README and the docs leads to a file (and a heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
INDEX = DOCS / "index.md"
#: A Markdown link or image: [text](target), the target up to a space or the closing bracket.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md")), *sorted((DOCS / "design").glob("*.md"))]


def links(page: Path) -> list[str]:
    """The link targets of a page's prose (code blocks and inline code left out)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as
    hyphens, a repeated heading numbered."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def test_the_readme_is_a_landing_page_of_at_most_8_kb() -> None:
    text = README.read_text()
    assert len(text.encode()) <= 8 * 1024, f"README.md is {len(text.encode())} bytes: move details to docs/"
    for heading in ("## The two commands", "## A tour", "## The docs"):
        assert heading in text, heading
    assert "make run" in text and "make test" in text


def test_the_index_links_every_doc() -> None:
    linked = {(INDEX.parent / target.split("#")[0]).resolve() for target in links(INDEX)}
    docs = [p for p in pages() if p.parent != ROOT and p != INDEX]
    missing = [str(p.relative_to(ROOT)) for p in docs if p.resolve() not in linked]
    assert not missing, f"docs/index.md does not link {missing}"
    assert len(docs) >= 15, docs


def test_the_index_orders_quickstart_guides_reference_design_notes() -> None:
    headings = re.findall(r"^## (.+)$", INDEX.read_text(), flags=re.M)
    assert headings == ["Quickstart", "Guides", "Reference", "Design notes"]


def test_every_relative_link_resolves() -> None:
    broken = []
    for page in pages():
        for target in links(page):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto: and the like
            path, _, anchor = target.partition("#")
            where = (page.parent / path).resolve() if path else page
            if not where.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_link_finder_and_the_anchors() -> None:
    page = ROOT / "docs" / "index.md"
    assert "WRITING_A_BOT.md" in links(page)
    assert {"quickstart", "design-notes"} <= anchors(page)
