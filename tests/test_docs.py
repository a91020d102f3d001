"""The documentation site builds with `mkdocs build --strict`: a broken link, a page missing from the
nav, or a reference page the hook cannot generate (docs/hooks/reference.py) fails the build."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _mkdocs_available() -> bool:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError:
        return False
    return True


_needs_mkdocs = pytest.mark.skipif(
    not _mkdocs_available() and os.environ.get("CI") != "true",
    reason="mkdocs is not installed (pip install -e '.[dev]'); runs under CI=true",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built once with `mkdocs build --strict`, for every test that reads the built pages."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    site = tmp_path_factory.mktemp("docs") / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    yield site
    shutil.rmtree(site)


@_needs_mkdocs
def test_the_documentation_site_builds_strictly(site):
    for page in (
        "index.html",
        "tutorial/index.html",
        "quickstart/index.html",
        "troubleshooting/index.html",
        "reference/cli/index.html",
        "reference/config/index.html",
        "results/index.html",
        "reviews/index.html",
        "changelog/index.html",
        "contributing/index.html",
    ):
        assert (site / page).exists(), page
    cli = (site / "reference/cli/index.html").read_text(encoding="utf-8")
    config = (site / "reference/config/index.html").read_text(encoding="utf-8")
    assert "reeval validity" in cli and "--annotator" in cli  # generated from the Typer app
    assert "reeval models install" in cli  # a sub-command of a command group
    assert "error_budget" in config and "task: bench" in config  # from the pydantic schema and the task options
    changelog = (site / "changelog/index.html").read_text(encoding="utf-8")
    assert "answer_swap/19" in changelog and 'href="../results/strength/"' in changelog  # CHANGELOG.md, links rewritten
    _images_resolve(site)
    _no_unknown_tags(site)


# What makes a browser fetch something as a page loads: a stylesheet, script, image, frame, media or
# preload link, and a stylesheet's url() and @import. A link the reader clicks (<a href>) is no request.
_FETCHED = re.compile(
    r"<(?:link|script|img|iframe|source|video|audio|embed|object)\b[^>]*?\s(?:src|href|data|srcset)=\"([^\"]+)\"",
    re.I,
)
_CSS_FETCHED = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])([^'")\s]+)""", re.I)


def _other_host(url: str) -> bool:
    return bool(re.match(r"(?:[a-z][a-z0-9+.-]*:)?//", url, re.I))


@_needs_mkdocs
def test_no_built_page_fetches_from_another_host(site):
    """The site is read offline: no theme font from Google Fonts, no script or stylesheet from a CDN."""
    remote = []
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        remote += [f"{page.relative_to(site)}: {url}" for url in _FETCHED.findall(text) if _other_host(url)]
    for sheet in sorted(site.rglob("*.css")):
        text = sheet.read_text(encoding="utf-8")
        remote += [f"{sheet.relative_to(site)}: {url}" for url in _CSS_FETCHED.findall(text) if _other_host(url)]
    assert not remote, "\n".join(sorted(set(remote)))


@pytest.mark.browser
@_needs_mkdocs
def test_no_built_page_requests_another_host_in_chromium(site):
    """What a browser really asks for, the theme's scripts included (they load a polyfill, mermaid or a
    repository's star count from the network only on conditions this site never meets)."""
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    from tests.browser import chromium_page, require_chromium, running_server

    require_chromium()
    app = Starlette(routes=[Mount("/", StaticFiles(directory=site, html=True))])
    pages = sorted(p.relative_to(site).parent.as_posix() for p in site.rglob("index.html"))
    elsewhere, failed = [], []
    with running_server(app) as base, chromium_page() as page:
        # Refused at once rather than left to time out: the test runs offline too.
        page.route(
            "**/*",
            lambda route: route.continue_() if route.request.url.startswith(base) else route.abort(),
        )
        page.on("request", lambda r: elsewhere.append(r.url) if not r.url.startswith(base) else None)
        for path in pages:
            url = f"{base}/" if path == "." else f"{base}/{path}/"
            response = page.goto(url, wait_until="load")
            if response is None or not response.ok:
                failed.append(url)
    assert not failed, failed
    assert not elsewhere, sorted(set(elsewhere))


def _images_resolve(site: Path) -> None:
    """Every image a built page shows is in the site (an image under an excluded folder is a 404)."""
    missing = []
    for page in site.rglob("*.html"):
        for src in re.findall(r'<img[^>]+src="([^"]+)"', page.read_text(encoding="utf-8")):
            if src.startswith(("http:", "https:", "data:")):
                continue
            if not (page.parent / src.split("#")[0]).resolve().exists():
                missing.append(f"{page.relative_to(site)}: {src}")
    assert not missing, missing


# The elements the theme, Markdown and mkdocstrings write; any other tag in a built page is a placeholder
# (`<run-id>` in a docstring or help text, say) that the browser swallows.
_KNOWN_TAGS = set(
    """a abbr article aside b blockquote body br button caption circle cite code col colgroup dd del details div
    dl dt em figcaption figure footer form g h1 h2 h3 h4 h5 h6 head header hr html i img input kbd label li link
    main mark meta nav ol option p path pre script section select small source span strong style sub summary
    sup svg table tbody td template textarea tfoot th thead title tr u ul var""".split()
)


def _no_unknown_tags(site: Path) -> None:
    unknown = []
    for page in site.rglob("*.html"):
        rel = page.relative_to(site)
        if rel.parts[0] == "reviews" and len(rel.parts) > 2:
            continue
        for tag in re.findall(r"<([A-Za-z][\w.-]*)[\s>/]", page.read_text(encoding="utf-8")):
            if tag.lower() not in _KNOWN_TAGS:
                unknown.append(f"{rel}: <{tag}>")
    assert not unknown, sorted(set(unknown))


# Markdown renders `<run-id>` written outside code as an unknown HTML tag: the browser shows nothing.
_PLACEHOLDER = re.compile(r"<([A-Za-z][^<>=\n]*)>")
_HTML_TAGS = {"br", "details", "summary", "sub", "sup", "kbd", "img", "div", "span", "p", "b", "i", "em", "a"}


def _outside_code(text: str) -> str:
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"~~~.*?~~~", "", text, flags=re.S)
    return re.sub(r"`[^`]*`", "", text)


def test_no_placeholder_outside_code_in_the_docs():
    """Every page the site shows (the generated CLI and config references and the changelog included) and
    the README."""
    pages = {**_site_pages(), "README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    found = []
    for name, text in pages.items():
        found += [
            f"{name}: <{m}>"
            for m in _PLACEHOLDER.findall(_outside_code(text))
            if m.split()[0].lower() not in _HTML_TAGS
        ]
    assert not found, found


def test_every_config_key_has_a_meaning():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import reference
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    empty = []
    section = ""
    for line in reference.config_page().splitlines():
        if line.startswith("#"):
            section = line
        cells = re.split(r"(?<!\\)\|", line.strip())
        if line.startswith("| `") and len(cells) >= 5 and not cells[-2].strip():
            empty.append(f"{section} {cells[1].strip()}")
    assert not empty, empty


# Material shows 80 characters of a code line at a 1280 px wide window (measured in chromium: the code
# column is 80.2 characters wide); a longer line is cut off behind a scroll bar.
CODE_LINE_LIMIT = 80
_FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)


def _site_pages() -> dict[str, str]:
    """The markdown of every page the site shows: docs/ (without the archived runs' data), the pages the
    hooks generate, and the changelog."""
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import reference
        import root_pages
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))

    def shown(page: Path) -> bool:
        archived_data = "reviews" in page.parts and page.parent.name != "reviews"
        return not {"hooks", "readings"} & set(page.parts) and not archived_data

    pages = {
        str(page.relative_to(ROOT)): page.read_text(encoding="utf-8")
        for page in ROOT.joinpath("docs").rglob("*.md")
        if shown(page)
    }
    pages["reference/cli.md (generated)"] = reference.cli_page()
    pages["reference/config.md (generated)"] = reference.config_page()
    for source in root_pages.PAGES.values():
        pages[source.name] = root_pages.page_text(source)
    return pages


def test_no_code_line_is_cut_off_at_1280px():
    long = []
    for name, text in _site_pages().items():
        for block in _FENCE.finditer(text):
            for line in block.group(2).splitlines():
                if len(line) > CODE_LINE_LIMIT:
                    long.append(f"{name}: {len(line)} > {CODE_LINE_LIMIT}: {line[:60]}…")
    assert not long, "\n".join(long)


def test_readme_fits_in_150_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; details belong in docs/"


def _tracked(*pathspecs: str) -> list[Path]:
    done = subprocess.run(["git", "ls-files", "-z", "--", *pathspecs], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    return [ROOT / name for name in done.stdout.split("\0") if name]


def test_no_tracker_numbers_in_code_tests_or_docs():
    """History is told in CHANGELOG.md and on the results pages by what changed, not by a tracker's number.
    The archived runs' data under docs/reviews/ and docs/readings/ are records and are left as written."""
    pattern = re.compile(r"issue [0-9]+", re.I)
    found = []
    for path in _tracked("*.py", "*.md", "*.yaml", "*.yml", "*.toml", "*.sh", "*.html", "*.j2"):
        rel = path.relative_to(ROOT)
        if rel.parts[:2] in {("docs", "reviews"), ("docs", "readings")} or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{rel}:{number}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


def test_at_most_three_comment_lines_above_a_version():
    """A generator's version history is in CHANGELOG.md; the comment above `VERSION =` points there."""
    long = []
    for path in sorted((ROOT / "programs").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for index, line in enumerate(lines):
            if line.startswith("VERSION ="):
                above = 0
                while index - above - 1 >= 0 and lines[index - above - 1].startswith("#"):
                    above += 1
                if above > 3:
                    long.append(f"{path.relative_to(ROOT)}: {above} comment lines above VERSION")
    assert not long, long


def _program_versions() -> dict[str, int]:
    """The code's current version of each versioned program (`VERSION = "answer_swap/31"` and the like),
    read from the source so that no model library is imported."""
    versions = {}
    for path in [*ROOT.joinpath("programs").rglob("*.py"), *ROOT.joinpath("experiments").rglob("*.py")]:
        for name, number in re.findall(
            r'^[A-Z_]*VERSION = "([a-z_]+)/([0-9]+)"', path.read_text(encoding="utf-8"), re.M
        ):
            versions[name] = max(versions.get(name, 0), int(number))
    return versions


def test_no_page_names_a_program_version_the_code_does_not_have():
    """A guide, the concepts, the tutorial or the README that names `answer_swap/40` while the code is at
    `/31` describes a program nobody can run. Results pages, the changelog and the archived runs record
    what was measured at a version and are left out; an older version named elsewhere is history
    ("since `/29`"), which the check allows."""
    versions = _program_versions()
    assert {"answer_swap", "faitheval", "context_enrich"} <= set(versions), versions
    mention = re.compile(r"\b(" + "|".join(sorted(versions, key=len, reverse=True)) + r")/([0-9]+)\b")
    pages = {
        name: text
        for name, text in {**_site_pages(), "README.md": (ROOT / "README.md").read_text(encoding="utf-8")}.items()
        if not name.startswith(("docs/results/", "CHANGELOG"))
    }
    ahead = [
        f"{name}: {program}/{number} (the code: {program}/{versions[program]})"
        for name, text in pages.items()
        for program, number in mention.findall(text)
        if int(number) > versions[program]
    ]
    assert not ahead, "\n".join(sorted(set(ahead)))


# Pages that record what was measured at a version: they keep naming it.
RECORD_PAGES = ("docs/results/", "docs/reviews/", "CHANGELOG")
RECORDED_AT = re.compile(r'^!!! warning "Recorded at `', re.M)


def _shown_versions(text: str) -> list[tuple[str, str]]:
    """The program versions a page shows as output: inside fenced code blocks, and in the sentence that says
    when its output was recorded or captured. Prose elsewhere naming a version tells history ("from `/34` the
    pivot names no place")."""
    versions = _program_versions()
    mention = re.compile(r"\b(" + "|".join(sorted(versions, key=len, reverse=True)) + r")/([0-9]+)\b")
    blocks = re.findall(r"^```.*?^```", text, re.M | re.S)
    statements = re.findall(r"[^.]*\b(?:[Rr]ecorded|captured)\b[^.]*", text)
    return [found for part in [*blocks, *statements] for found in mention.findall(part)]


def test_pages_show_the_output_of_the_current_programs():
    """The tutorial, the quickstart, concepts, the guides and the reference show what today's code prints. A
    page whose output was recorded at an older generator version than the code's says so above its first
    command (a `!!! warning "Recorded at …"`), so that a reader who gets other cases knows why; once it is
    recorded again at the current version the warning goes."""
    versions = _program_versions()
    stale, stale_warnings = [], []
    for name, text in _site_pages().items():
        if name.startswith(RECORD_PAGES):
            continue
        behind = sorted({f"{p}/{n}" for p, n in _shown_versions(text) if int(n) < versions[p]})
        warned = RECORDED_AT.search(text)
        if behind and not (warned and ("```" not in text or warned.start() < text.index("```"))):
            stale.append(f"{name}: shows {', '.join(behind)}")
        if warned and not behind:
            stale_warnings.append(name)
    assert not stale, "output of older programs, without a warning above the first command:\n" + "\n".join(stale)
    assert not stale_warnings, f"recorded at the current versions, their warning is out of date: {stale_warnings}"


def test_the_tutorial_says_which_version_it_was_recorded_at():
    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    assert re.search(r"[Rr]ecorded at `([a-z_]+)/([0-9]+)`", text), "docs/tutorial.md: no 'recorded at `<program>/<N>`'"
