"""README.md is also the package index's project description: it must read right there."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_no_links_or_images_that_a_package_index_page_cannot_resolve() -> None:
    """Relative links, images and in-page anchors break on the index page: files are named
    by their path instead."""
    relative = re.findall(r"!?\[[^\]]*\]\((?!https?://)([^)]*)\)", README)
    assert relative == []


def test_every_extra_is_in_the_install_section() -> None:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    install = README[README.index("## Install") : README.index("## Quick start")]
    for extra in parser["options.extras_require"]:
        assert f"| `{extra}` |" in install, extra


def test_every_example_and_file_the_readme_names_exists() -> None:
    for path in sorted(set(re.findall(r"`((?:examples|docs)/[^`\s]+)`", README))):
        assert (ROOT / path).exists(), path
    for name in ("DESIGN.md", "CHANGELOG.md", "LICENSE"):
        assert (ROOT / name).exists(), name
