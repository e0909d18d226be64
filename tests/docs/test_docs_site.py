"""The documentation site as a reader meets it: every page is in the navigation, every
paper the docs cite is on the references page and every citation links to it, and the
pages a user reads carry no development-log wording.

``python tests/docs/test_docs_site.py --link-citations`` links the citations the test finds
unlinked (``paper 003``, ``003 §5.5``, ``002's``) to docs/references.md, in docs/ and
README.md; run it after adding text that cites a paper.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REFERENCES = DOCS / "references.md"


# --------------------------------------------------------------------------- navigation
def nav_pages() -> dict[str, str]:
    """Every page in mkdocs.yml's nav, mapped to its top-level section's title (the page's
    own title for a top-level page).  Read line by line: the nav is a list of
    ``- Title: page.md`` and ``- Section:`` lines, indented by level."""
    pages: dict[str, str] = {}
    section = ""
    in_nav = False
    for line in (ROOT / "mkdocs.yml").read_text().splitlines():
        if re.match(r"^\S", line):
            in_nav = line.startswith("nav:")
            continue
        m = re.match(r"^(\s*)- (\"[^\"]*\"|[^:\"]+):\s*(\S+\.md)?\s*(#.*)?$", line)
        if not (in_nav and m):
            continue
        indent, title, page = len(m[1]), m[2].strip('" '), m[3]
        if indent <= 2:
            section = title
        if page:
            pages[page] = section
    return pages


def doc_files() -> set[str]:
    return {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}


def user_pages() -> list[Path]:
    """The pages outside the navigation's Internals section: what users land on."""
    return sorted(DOCS / page for page, section in nav_pages().items() if section != "Internals")


def test_every_page_is_in_the_navigation_and_every_nav_entry_is_a_page():
    nav = set(nav_pages())
    assert {"index.md", "references.md"} <= nav, "the reader parser no longer reads mkdocs.yml's nav"
    assert sorted(doc_files() - nav) == [], "add the page to mkdocs.yml's nav (an orphan page is unreachable)"
    assert sorted(nav - doc_files()) == []


def test_the_landing_page_routes_to_every_how_to():
    index = (DOCS / "index.md").read_text()
    howtos = sorted(p.name for p in (DOCS / "howto").glob("*.md"))
    assert len(howtos) >= 6
    assert [h for h in howtos if f"(howto/{h})" not in index] == []


@pytest.mark.parametrize("page", sorted(p.name for p in (DOCS / "howto").glob("*.md")))
def test_a_how_to_says_install_code_check_and_next(page):
    text = (DOCS / "howto" / page).read_text()
    assert "pip install" in text
    assert len(re.findall(r"```python\n", text)) >= 1
    assert re.search(r"^## (Check|How to check)", text, re.M), "say how to check the result"
    assert re.search(r"^## (Next|Where next)", text, re.M)
    body = text.split("\n## Next")[0].split("\n## Where next")[0]
    assert len(body.splitlines()) <= 80, "a how-to is one screen: move the detail to a reference page"


# --------------------------------------------------------------------------- citations
#: A paper number where it cites: ``paper 003``, ``papers 000``, ``003 §5``, ``002's``,
#: ``(004)``; not part of a larger number (``10 000``, ``5,000``).
CITATION = re.compile(r"(?<![\w.,§-])(?<!\d )(?:([Pp]apers?) )?(00[0-4])(?![\w])")
#: What the search skips: code (fenced and inline), links (their text and target), HTML.
PROTECTED = re.compile(r"```.*?```|`[^`\n]*`|\[[^\]\n]*\]\([^)\n]*\)|<[^>\n]*>", re.S)


def _citation_pages() -> list[Path]:
    return [p for p in sorted(DOCS.rglob("*.md")) if p != REFERENCES] + [ROOT / "README.md"]


def _reference_link(page: Path) -> str:
    if page.parent == ROOT:
        return "docs/references.md"
    depth = len(page.relative_to(DOCS).parts) - 1
    return "../" * depth + "references.md"


def _unprotected(text: str):
    """(start, end) of each stretch of text that is not code, a link or HTML."""
    at = 0
    for m in PROTECTED.finditer(text):
        yield at, m.start()
        at = m.end()
    yield at, len(text)


def unlinked_citations(page: Path) -> list[str]:
    text = page.read_text()
    found = []
    for start, end in _unprotected(text):
        for m in CITATION.finditer(text, start, end):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{page.relative_to(ROOT)}:{line}: {m[0]}")
    return found


def link_citations(page: Path) -> int:
    text = page.read_text()
    target = _reference_link(page)
    out, n = [], 0
    at = 0
    for start, end in _unprotected(text):
        out.append(text[at:start])

        def link(m: re.Match) -> str:
            nonlocal n
            n += 1
            return f"[{m[0]}]({target}#paper-{m[2]})"

        out.append(CITATION.sub(link, text[start:end]))
        at = end
    out.append(text[at:])
    if n:
        page.write_text("".join(out))
    return n


def test_every_cited_paper_is_on_the_references_page():
    cited = set()
    for page in _citation_pages():
        cited |= set(re.findall(r"references\.md#paper-(00\d)", page.read_text()))
        cited |= {m[2] for m in CITATION.finditer(page.read_text())}
    listed = set(re.findall(r"^## Paper (00\d)$", REFERENCES.read_text(), re.M))
    assert cited and cited <= listed, sorted(cited - listed)
    for number in listed:  # a title in bold and where to find it
        entry = REFERENCES.read_text().split(f"## Paper {number}\n")[1].split("\n## ")[0]
        assert re.search(r"\*\*[^*]{10,}\*\*", entry) and re.search(r"arXiv|DOI|[Tt]hesis|Proceedings", entry)


def test_every_citation_links_to_the_references_page():
    unlinked = [c for page in _citation_pages() for c in unlinked_citations(page)]
    assert unlinked == [], "run python tests/docs/test_docs_site.py --link-citations"


def test_the_citation_pattern_finds_citations_and_not_numbers():
    found = [m[0] for m in CITATION.finditer("paper 003, 004 §5.4, 002's Fig. 6, papers 000/002, (001); "
                                              "10 000 statements, 5,000 lines, 2000 points")]
    assert found == ["paper 003", "004", "002", "papers 000", "002", "001"]


# --------------------------------------------------------------------------- wording
#: Development-log wording: what a user page must not say.
DEV_LOG = [
    r"\bthe issues?'s?\b", r"\bissues?'s? (targets?|goals?)\b", r"\b[Ii]ssues? \d+\b", r"\bthis session\b",
    r"\bthe lead\b", r"\b(issue|session|development) report\b", r"\[[a-z]+\] issue\b",
    r"\bSPEC\b",  # the project's contract is not in the repository: say what it says, or link a page
]
#: Remarks about the machine a measurement ran on: not in the pages users land on.
MACHINE = [r"\bthis machine\b", r"\bdevelopment machine\b", r"\b\d-core\b", r"\b\d-CPU\b", r"\bshared VM\b",
           r"\bZen \d\b", r"\bloaded machine\b", r"\bload average\b"]


#: A measurement's diary (when it ran, how busy the machine was, what earlier runs gave):
#: on no user page but docs/performance.md, which keeps the measurement history (the
#: Internals pages, docs/architecture.md's "Size budgets" among them, are not user pages).
MEASUREMENT_LOG = [r"\bload average \d", r"\b\d{1,2}:\d{2}\b[^.\n]{0,12}\bUTC\b", r"\bearlier runs?\b",
                   r"\b20\d\d-\d\d-\d\d\b"]


def _prose(text: str) -> str:
    return re.sub(r"```.*?```", lambda m: "\n" * m[0].count("\n"), text, flags=re.S)  # lines kept: hits' numbers


@pytest.mark.parametrize("page", [p.relative_to(DOCS).as_posix() for p in user_pages()])
def test_a_user_page_has_no_development_log_wording(page):
    text = _prose((DOCS / page).read_text())
    patterns = DEV_LOG + (MACHINE if page == "index.md" or page.startswith(("howto/", "tutorial", "coming-from")) else [])
    hits = [f"{page}:{text.count(chr(10), 0, m.start()) + 1}: {m[0]}"
            for p in patterns for m in re.finditer(p, text)]
    if page != "performance.md":  # an example of output (`note: ... load average 7.9`) is no diary
        prose = re.sub(r"`[^`]*`", lambda m: "\n" * m[0].count("\n"), text)
        hits += [f"{page}:{prose.count(chr(10), 0, m.start()) + 1}: {m[0]}"
                 for p in MEASUREMENT_LOG for m in re.finditer(p, prose)]
    assert hits == [], "say it in the user's terms, or move the section to docs/internals/"


#: Outside docs/: the READMEs a newcomer reads first, and the section of docs/architecture.md
#: (an Internals page) that README links for the quick test tier.
FRONT_PAGES = {"README.md": None, "examples/README.md": None, "benchmarks/README.md": None,
               "docs/architecture.md": "## Tests"}


@pytest.mark.parametrize("path", sorted(FRONT_PAGES))
def test_the_front_pages_have_no_development_log_wording(path):
    text = (ROOT / path).read_text()
    if FRONT_PAGES[path]:
        text = FRONT_PAGES[path] + text.split(FRONT_PAGES[path] + "\n", 1)[1].split("\n## ", 1)[0]
    prose = re.sub(r"`[^`]*`", "", _prose(text))
    hits = [m[0] for p in DEV_LOG + MEASUREMENT_LOG for m in re.finditer(p, prose)]
    assert hits == [], f"{path}: {hits}"


def test_no_page_sends_a_reader_to_a_document_outside_the_repository():
    """The project's contract and design notes (SPEC.md, DESIGN.md) are not in the
    repository: a page says what they say, or links a page that does."""
    hits = [f"{p.relative_to(ROOT)}: {m[0]}" for p in sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"]
            for m in re.finditer(r"\b(SPEC|DESIGN)(\.md)?\b", p.read_text())]
    assert hits == []


#: A measured time or speed-up stated in prose: ``14 ms``, ``0.115 µs``, ``4.2x``, ``11×``.
MEASURED = re.compile(r"\b\d[\d.,]*\s*(ms|µs|us|ns|s|x|×)(?![\w])")


@pytest.mark.parametrize("page", ["tutorial.md", "index.md", "coming-from.md"] + sorted(
    f"howto/{p.name}" for p in (DOCS / "howto").glob("*.md")))
def test_the_first_pages_state_no_time_their_own_run_does_not_print(page):
    """The tutorial and the how-tos print what they measure on the reader's machine; a
    time written in their prose would be another machine's (and goes stale)."""
    prose = re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", (DOCS / page).read_text(), flags=re.S))
    assert [m[0] for m in MEASURED.finditer(prose)] == []
    assert MEASURED.search("both about 14 ms") and MEASURED.search("4.2x the peer")


def test_the_wording_patterns_catch_what_they_are_for():
    log = "The issue's targets are met (issue 21 report); this session's machine, the lead said."
    assert len([m for p in DEV_LOG for m in re.finditer(p, log)]) >= 4
    assert not [m for p in DEV_LOG for m in re.finditer(p, "each point issues a load; k.report() says")]
    diary = ("Measured 2026-11-28, 13:59-14:16 UTC (load average 14-18); two earlier runs (10:39 and "
             "10:56 UTC, load 12-15) gave less.")
    assert len([m for p in MEASUREMENT_LOG for m in re.finditer(p, diary)]) >= 5
    assert not [m for p in MEASUREMENT_LOG for m in re.finditer(
        p, "when the one-minute load average exceeds the CPUs; times in UTC; 2 loads a step")]


if __name__ == "__main__":
    if sys.argv[1:] != ["--link-citations"]:
        sys.exit(__doc__)
    for page in _citation_pages():
        if n := link_citations(page):
            print(f"{page.relative_to(ROOT)}: {n} citations linked")
