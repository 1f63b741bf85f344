"""README.md is the ten-minute page and the package index's project description; docs/ is the
documentation site (``make docs``). What they tell a user to type must exist and must run.

The snippets themselves run against a real broker in a fresh virtual environment in
``integration_tests/test_wheel_install.py``; here, without a broker: every Python snippet
compiles, every command, option, ``make`` target and file they name exists.
"""

from __future__ import annotations

import configparser
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kafka_sticky_plugin

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# The site's pages; index.md, design.md and changelog.md only include README.md, DESIGN.md
# and CHANGELOG.md (pymdownx.snippets), which are read as themselves.
PAGES = {
    path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "docs").rglob("*.md"))
}
DOCUMENTS = {"README.md": README, **PAGES}

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
#: ```python blocks are programs: the wheel test (integration_tests/test_wheel_install.py) runs
#: them against a broker; ```py blocks are fragments of a program (names from around them):
#: both must compile.
_PYTHON_FENCES = ("python", "py")


def _code_lines(text: str) -> list[str]:
    """Inline code spans and the lines of shell (not Python) fenced blocks."""
    lines: list[str] = []
    for match in _FENCE.finditer(text):
        if match.group(1) not in _PYTHON_FENCES:
            lines.extend(match.group(2).splitlines())
    outside = _FENCE.sub("", text)
    lines.extend(_CODE_SPAN.findall(outside.replace("\n", " ")))
    return lines


def test_no_links_or_images_that_a_package_index_page_cannot_resolve() -> None:
    """Relative links, images and in-page anchors break on the index page: files are named
    by their path instead."""
    relative = re.findall(r"!?\[[^\]]*\]\((?!https?://)([^)]*)\)", README)
    assert relative == []


def test_the_readme_is_a_ten_minute_page() -> None:
    """About 300 lines (the rest is on the site); it is also the wheel's long description."""
    assert len(README.splitlines()) <= 370


def test_every_extra_is_in_the_install_section() -> None:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    install = README[README.index("## Install") : README.index("## Quick start")]
    for extra in parser["options.extras_require"]:
        assert f"| `{extra}` |" in install, extra


def test_install_from_source_comes_first_and_names_the_wheel_this_checkout_builds() -> None:
    """The package is not on the index: a checkout and a built wheel come before the index."""
    install = README[README.index("## Install") : README.index("## Quick start")]
    from_checkout = install.index('pip install "./kafka-sticky-plugin[kafka-python]"')
    from_index = install.index('pip install "kafka-sticky-plugin[kafka-python]"')
    assert from_checkout < from_index
    wheel = f"dist/kafka_sticky_plugin-{kafka_sticky_plugin.__version__}-py3-none-any.whl"
    assert wheel in install


def test_every_example_and_file_the_documents_name_exists() -> None:
    roots = "examples|docs|tests|integration_tests|kafka_sticky_plugin|scripts|benchmarks|jvm"
    named = re.compile(rf"`((?:{roots})/[^`\s]+)`")
    for document, text in DOCUMENTS.items():
        for path in sorted(set(named.findall(text))):
            path = path.split("::")[0]
            if any(c in path for c in "<*{"):  # a pattern, not a file
                continue
            assert (ROOT / path).exists(), f"{document}: {path}"
    for name in ("DESIGN.md", "CHANGELOG.md", "LICENSE"):
        assert (ROOT / name).exists(), name


@pytest.mark.parametrize("document", sorted(DOCUMENTS))
def test_every_python_snippet_compiles(document: str) -> None:
    """A snippet with a syntax error would only be found by a reader (the wheel test runs
    them, but only in its slow tier)."""
    text = DOCUMENTS[document]
    for match in _FENCE.finditer(text):
        if match.group(1) in _PYTHON_FENCES:
            line = text.count("\n", 0, match.start()) + 1
            compile(match.group(2), f"{document}:{line}", "exec")


def _commands() -> dict[str, set[str]]:
    """``python -m kafka_sticky_plugin CMD --opt ...`` named anywhere: CMD -> its options."""
    found: dict[str, set[str]] = {}
    for text in DOCUMENTS.values():
        for line in _code_lines(text):
            for match in re.finditer(r"python -m kafka_sticky_plugin ([a-z][a-z-]*)([^#]*)", line):
                options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", match.group(2)))
                found.setdefault(match.group(1), set()).update(options)
    return found


def test_the_documents_name_the_commands() -> None:
    assert {"broker", "demo", "assign", "simulate", "conformance"} <= set(_commands())


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_command_and_option_the_documents_name_exists(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kafka_sticky_plugin", command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"python -m kafka_sticky_plugin {command}: {done.stderr}"
    for option in sorted(_commands()[command]):
        assert option in done.stdout, f"{command} has no {option}"


def _make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets: set[str] = set()
    for match in re.finditer(r"^([A-Za-z][\w .-]*?)\s*:(?!=)", makefile, re.MULTILINE):
        targets.update(match.group(1).split())
    return targets


def _named_make_targets() -> dict[str, str]:
    """``make TARGET ...`` in code: target -> the first document naming it."""
    named: dict[str, str] = {}
    for document, text in DOCUMENTS.items():
        for line in _code_lines(text):
            line = re.sub(r"\w+=(\"[^\"]*\"|'[^']*')", "", line)  # VAR="a b" is no target
            for match in re.finditer(r"(?:^|\s|&&\s*)make((?:\s+[\w.-]+(?:=\S*)?)+)", line):
                for word in match.group(1).split():
                    if "=" not in word and not word.startswith("-"):
                        named.setdefault(word, document)
    return named


def test_every_make_target_the_documents_name_exists() -> None:
    named = _named_make_targets()
    assert {"demo", "test", "docs", "docs-serve", "check"} <= set(named)
    missing = {target: doc for target, doc in named.items() if target not in _make_targets()}
    assert missing == {}


def test_make_test_builds_the_documentation() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    (prerequisites,) = re.findall(r"^test:(.*)$", makefile, re.MULTILINE)
    assert "docs" in prerequisites.split()
    assert re.search(r"^docs:.*\n(?:\t.*\n)*\t.*mkdocs build --strict", makefile, re.MULTILINE)


def test_every_page_is_in_the_site_navigation() -> None:
    """mkdocs --strict warns about pages left out of the nav; this names the page at once."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config[config.index("\nnav:") :]
    for page in PAGES:
        assert page.removeprefix("docs/") in nav, page
