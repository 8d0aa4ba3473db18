"""The layout tables the guide quotes are the real output, character for character.

tests/test_docs_examples.py runs every ``>>>`` example of the guide with
NORMALIZE_WHITESPACE (so prose-like outputs may wrap); that hides a table
that differs from print_layout's by a space, which a reader copying it into a
comparison would trip on (issue 14: two tables lacked the header's trailing
space, CuTe's ``"  %*d "`` format). Here every example that prints a table
(``print_layout``, ``to_text``, ``print_tensor``) must match exactly.
"""

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs" / "guide").glob("*.md")) + [ROOT / "README.md"]
TABLE_CALLS = ("print_layout(", "to_text(", "print_tensor(")


def _run(page: Path):
    """``(runner, failures text, exact examples)``: the page's examples, table ones without whitespace slack."""
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL)
    source = "\n".join(b for b in blocks if ">>>" in b)
    test = doctest.DocTestParser().get_doctest(source, {}, page.name, str(page), 0)
    exact = 0
    for ex in test.examples:
        if any(c in ex.source for c in TABLE_CALLS) and ex.want.strip():
            ex.options[doctest.NORMALIZE_WHITESPACE] = False
            exact += 1
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append)
    return runner, "".join(out), exact


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_quoted_tables_match_exactly(page):
    runner, out, _exact = _run(page)
    assert runner.failures == 0, out


def test_the_guide_quotes_tables():
    """Guard: the check above has tables to check (seeing.md quotes print_layout tables)."""
    assert _run(ROOT / "docs" / "guide" / "seeing.md")[2] >= 2


def test_a_missing_trailing_space_fails(tmp_path):
    """The check can fail: the header line without print_layout's trailing space."""
    page = tmp_path / "page.md"
    page.write_text("```python\n>>> from cute_py.viz import print_layout\n>>> from cute_py import Layout\n"
                    ">>> print_layout(Layout((1, 2)))\n(1,2):(0,1)\n      0   1\n    +---+---+\n"
                    " 0  | 0 | 1 |\n    +---+---+\n```\n")
    runner, out, exact = _run(page)
    assert exact == 1 and runner.failures == 1, out
    page.write_text(page.read_text().replace("      0   1\n", "      0   1 \n"))
    assert _run(page)[0].failures == 0
