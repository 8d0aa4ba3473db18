"""Every ``>>>`` example quoted in the user guide and the README runs and prints what the page says, to the
character (no NORMALIZE_WHITESPACE: a quoted slice of 31 characters that the code prints as 32 is a wrong page)."""

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs" / "guide").glob("*.md")) + [ROOT / "README.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_examples(page):
    text = page.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    source = "\n".join(b for b in blocks if ">>>" in b)
    if not source:
        pytest.skip(f"{page.name} quotes no >>> examples")
    test = doctest.DocTestParser().get_doctest(source, {}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)   # whitespace as printed: what a reader copies
    out = []
    runner.run(test, out=out.append)
    assert runner.tries > 0
    assert runner.failures == 0, "".join(out)
