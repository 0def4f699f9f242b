"""The documentation: every relative link in README.md and the docs resolves inside the
repository, README.md stays short, and the text speaks of the design, not of how it was
worked on (no citations of files outside the repository, no work-session chronology)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", ROOT / "firmware_tests" / "README.md", *(ROOT / "docs").glob("*.md")])
README_LIMIT = 10 * 1024

_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")

# Work-session chronology and process words: "the fifteenth stop", "this stop", "two stops
# ago", a review, "this machine", a CI budget, a dated heading, a work item named in a title.
# A "stop" on its own is hardware (the DCU stops, a pipeline stop) and is not matched.
_ORDINALS = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
             "thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth")
_SESSION_WORDS = [
    (re.compile(rf"\b(?:{_ORDINALS}|this|last|previous|earlier|later|next) stops?\b", re.I), "a work-session 'stop'"),
    (re.compile(r"\bstops? ago\b", re.I), "a work-session 'stop'"),
    (re.compile(r"\bsessions?\b", re.I), "a work session"),
    (re.compile(r"\breview(?:s|ed|er)?\b", re.I), "a review"),
    (re.compile(r"\b(?:this|these) machines?\b|\bloaded machine\b", re.I), "'this machine'"),
    (re.compile(r"\bCI\b"), "CI"),
    (re.compile(r"\b20\d\d-\d\d-\d\d\b"), "a date"),
    (re.compile(r"\(issue \""), "a work item in a title"),
]


def _prose(text: str) -> str:
    """The text without fenced code blocks (commands and program output quote themselves)."""
    return _FENCE.sub("", text)


def _links(text: str) -> list[str]:
    return _LINK.findall(_CODE.sub("", _prose(text)))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def _anchors(path: Path) -> set[str]:
    return {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.+?)\s*#*$", _prose(path.read_text()), re.M)}


def _ids(paths) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths]


@pytest.mark.parametrize("doc", DOCS, ids=_ids(DOCS))
def test_relative_links_resolve_inside_the_repository(doc):
    bad = []
    for target in _links(doc.read_text()):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):      # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if ROOT not in dest.parents and dest != ROOT:
            bad.append(f"{target}: outside the repository")
        elif not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(f"{target}: no heading with that anchor")
    assert not bad, f"{doc.relative_to(ROOT)}: " + "; ".join(bad)


def test_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes, over {README_LIMIT}"


@pytest.mark.parametrize("doc", DOCS, ids=_ids(DOCS))
def test_no_work_session_words(doc):
    text = doc.read_text()
    hits = [f"line {text.count(chr(10), 0, m.start()) + 1}: {what} ({m.group(0)!r})"
            for pattern, what in _SESSION_WORDS for m in pattern.finditer(text)]
    assert not hits, f"{doc.relative_to(ROOT)}: " + "; ".join(hits)


_OUTSIDE_FILE = re.compile(r"\b" + "BRI" + r"EF\b")     # the project's brief, not in the repository (spelled
                                                         # apart so that this file does not cite it either)


def test_no_citation_of_a_file_outside_the_repository():
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    hits = []
    for name in filter(None, files.decode().split("\0")):
        path = ROOT / name
        if not path.is_file() or path.suffix in (".png", ".o", ".hsaco", ".bc"):
            continue
        text = path.read_bytes()
        if b"\0" in text[:4096]:                                 # binary
            continue
        for n, line in enumerate(text.decode(errors="replace").splitlines(), 1):
            if _OUTSIDE_FILE.search(line):
                hits.append(f"{name}:{n}")
    assert not hits, "cites the brief, a file outside the repository: " + ", ".join(hits)


def test_the_checks_catch_what_they_look_for(tmp_path):
    """The patterns flag work-session words and broken links, and leave hardware 'stops' alone."""
    flagged = lambda s: [w for p, w in _SESSION_WORDS if p.search(s)]   # noqa: E731
    assert flagged("measured at the fifteenth stop") and flagged("as of this stop")
    assert flagged("two stops ago") and flagged("CI allows 90 minutes") and flagged("on this machine")
    assert flagged("## Logic depth (2026-11-29)") and flagged('# SIMD (issue "RTL SIMD32")')
    assert not flagged("an error stops the DCU; the pipeline stops; a run that stops making progress")
    assert _links("see [a](docs/x.md#y) and ![b](img/c.svg) but not `[c](d.md)`") == ["docs/x.md#y", "img/c.svg"]
    assert _slug("The C++: clang, -O2, -march=native") == "the-c-clang--o2--marchnative"
    assert _OUTSIDE_FILE.search("(" + "BRI" + "EF §2)") and not _OUTSIDE_FILE.search("a brief note")
