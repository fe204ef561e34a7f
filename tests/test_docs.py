"""The docs hold together: every relative link in the Markdown pages points at a file that
exists (and, for a link into a page, at a heading of that page), and the pages a newcomer reads
first stay short."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md"),
                ROOT / "benchmarks" / "README.md", *(ROOT / "research").rglob("*.md")])
MAX_LINES = {"README.md": 200, "docs/consensus.md": 150, "docs/performance.md": 150}

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def prose(text: str) -> str:
    """The page without fenced code blocks and inline code, where brackets are not links."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces to
    hyphens, a repeated heading numbered."""
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", FENCE.sub("", page.read_text(encoding="utf-8")), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return out


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        where = f"{page.relative_to(root)}: {target}"
        if not file.exists():
            broken.append(f"{where} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{where} (no heading #{anchor} in {file.relative_to(root)})")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []


def test_the_check_finds_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "other.md").write_text("# Title\n\n## What it costs: `--threads`\n")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md#what-it-costs---threads) [b](missing.md) [c](other.md#nowhere)\n"
                    "[d](#here) [e](https://example.org/x) `[f](not-a-link.md)`\n\n## Here\n\n"
                    "```\n[g](inside-code.md)\n```\n")
    assert broken_links(page, root=tmp_path) == ["page.md: missing.md (no such file)",
                                  "page.md: other.md#nowhere (no heading #nowhere in other.md)"]


@pytest.mark.parametrize("name, limit", sorted(MAX_LINES.items()))
def test_the_first_pages_stay_short(name, limit):
    lines = (ROOT / name).read_text(encoding="utf-8").count("\n")
    assert lines <= limit, f"{name} has {lines} lines; at most {limit}: move records to research/ or benchmarks/"


def test_the_results_page_is_what_its_builder_writes(tmp_path):
    """docs/results.md is built from the evaluation JSON files and the prose beside its builder; it
    had been edited by hand, so a rebuild (even ``--help``, which the builder did not read) replaced
    970 of its lines, the ranking study's included. Edit the prose in
    benchmarks/evaluation/results_md/, then rebuild."""
    import subprocess
    import sys

    out = tmp_path / "results.md"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "evaluation" / "build_results_md.py"),
                           "--output", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
