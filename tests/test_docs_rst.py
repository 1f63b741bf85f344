"""scripts/docs_rst.py, the griffe extension ``make docs`` uses: the package's Sphinx-style
docstrings become Markdown that shows the same thing in the API reference."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

import kafka_sticky_plugin.confluent
import kafka_sticky_plugin.hooks
import kafka_sticky_plugin.kafka_python

pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parents[1]


def _extension() -> Any:
    spec = importlib.util.spec_from_file_location("docs_rst", ROOT / "scripts" / "docs_rst.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_roles_and_literals_become_inline_code() -> None:
    convert = _extension().rst_to_markdown
    text = "Raises :class:`~kafka_sticky_plugin.errors.ConfigurationError`; :func:`f`, ``x``."
    assert convert(text) == "Raises `ConfigurationError`; `f`, `x`."


def test_a_literal_block_becomes_a_fenced_block_and_its_text_stays_whole() -> None:
    convert = _extension().rst_to_markdown
    doc = kafka_sticky_plugin.kafka_python.__doc__
    assert doc is not None and "::" in doc
    markdown = convert(doc)
    assert "```\nfrom kafka import KafkaConsumer\n" in markdown
    assert "install_hooks(consumer)  # the one line" in markdown
    assert ":func:" not in markdown and ":class:" not in markdown
    assert re.search(r"(?<!`)``(?!`)", markdown) is None  # no RST literal left (fences are ```)
    # Words are kept: only the markup around them changes.
    assert markdown.split()[:5] == doc.split()[:5]
    assert "`KafkaConsumer` Java-grade" in markdown


def test_every_public_face_docstring_converts_without_leftover_markup() -> None:
    convert = _extension().rst_to_markdown
    for module in (kafka_sticky_plugin, kafka_sticky_plugin.hooks, kafka_sticky_plugin.confluent):
        markdown = convert(module.__doc__ or "")
        assert ":func:`" not in markdown and ":class:`" not in markdown and ":mod:`" not in markdown
        assert markdown.count("```") % 2 == 0
