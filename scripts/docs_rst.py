"""A griffe extension for ``make docs``: the package's docstrings read as reStructuredText
(Sphinx roles such as ``:func:`install_hooks```, double-backtick literals, ``::`` literal
blocks), while mkdocstrings renders Markdown. On load, each docstring is rewritten to the
Markdown that shows the same thing: a role becomes inline code (``~`` keeps the last name, as
Sphinx does), a literal becomes inline code, a ``::`` block becomes a fenced code block.
Nothing else in the text changes, and the sources are not touched.

mkdocs.yml names it (``extensions: - scripts/docs_rst.py:RstDocstrings``);
``tests/test_docs_rst.py`` checks it on the package's own docstrings.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|exc|data|obj|const):`(~?)([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``")
_FENCE = "```"


def _role(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


def _inline(line: str) -> str:
    return _LITERAL.sub(r"`\1`", _ROLE.sub(_role, line))


def rst_to_markdown(text: str) -> str:
    """The Markdown for one docstring written with Sphinx roles and ``::`` literal blocks."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.rstrip().endswith("::"):
            out.append(_inline(line))
            i += 1
            continue
        lead = line.rstrip()[:-2].rstrip()  # "Then::" reads "Then:", a lone "::" nothing
        if lead:
            out.append(_inline(lead if lead.endswith(":") else lead + ":"))
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        block: list[str] = []
        while j < len(lines) and (not lines[j].strip() or lines[j].startswith((" ", "\t"))):
            block.append(lines[j])
            j += 1
        while block and not block[-1].strip():
            block.pop()
        out.extend(["", _FENCE, *textwrap.dedent("\n".join(block)).split("\n"), _FENCE, ""])
        i = j
    return "\n".join(out)


class RstDocstrings(griffe.Extension):  # type: ignore[misc]
    """Rewrites every loaded object's docstring with :func:`rst_to_markdown`."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
