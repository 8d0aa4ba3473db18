"""The guide's pictures are readable in the built docs: none is shrunk below 90% of its drawn size.

Issue 14: the 8x64 bank pictures (1900 px wide) were embedded as Markdown
images, which the theme scales to the text column (about 46em = 736 px in
furo), so their 11 px labels came out at about 4 px. A picture wider than the
column is shown at its natural size in a horizontally scrolling box instead:
raw HTML ``<div style="overflow-x: auto"><img ... style="max-width: none">``,
whose ``src`` under ``_static/`` the build copies (``html_static_path``).
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "guide" / "seeing.md"
FIGURES = ROOT / "docs" / "_static" / "figures"
COLUMN_PX = 736        # furo's content column, 46em at 16 px; alabaster's is narrower still
MIN_SCALE = 0.9        # an 11 px label stays at least ~10 px


def _width(name: str) -> int:
    head = (FIGURES / name).read_text(encoding="utf-8").split(">", 1)[0]
    return int(re.search(r'\bwidth="(\d+)"', head).group(1))


def _embeds(text: str) -> dict:
    """``{figure name: displayed scale}`` for every figure the page shows."""
    out = {}
    for _alt, path in re.findall(r"!\[([^\]]*)\]\(\.\./_static/figures/([^)]+)\)", text):
        out[path] = min(1.0, COLUMN_PX / _width(path))                       # Markdown image: fit to the column
    for div, path, img in re.findall(r'(<div[^>]*>)\s*(?:<img[^>]*src="\.\./_static/figures/([^"]+)"([^>]*)>)', text):
        natural = "overflow-x: auto" in div and "max-width: none" in img
        out[path] = 1.0 if natural else min(1.0, COLUMN_PX / _width(path))
    return out


def test_every_guide_picture_is_shown_readably():
    embeds = _embeds(PAGE.read_text(encoding="utf-8"))
    assert {"banks_unswizzled.svg", "banks_swizzled.svg"} <= set(embeds)
    small = {name: round(scale, 2) for name, scale in embeds.items() if scale < MIN_SCALE}
    assert not small, f"pictures shrunk below {MIN_SCALE:.0%} of their size in the docs: {small}"


def test_raw_html_pictures_are_copied_by_the_build():
    if "<img" in PAGE.read_text(encoding="utf-8"):
        conf = runpy.run_path(str(ROOT / "docs" / "conf.py"))
        assert "_static" in conf.get("html_static_path", [])


def test_the_check_can_fail():
    """A 1900 px picture as a Markdown image is shrunk to ~0.39; in the scrolling box it is not."""
    md = "![bank map](../_static/figures/banks_unswizzled.svg)"
    assert _embeds(md)["banks_unswizzled.svg"] == pytest.approx(COLUMN_PX / 1900)
    box = ('<div style="overflow-x: auto"><img src="../_static/figures/banks_unswizzled.svg" alt="" '
           'style="max-width: none"></div>')
    assert _embeds(box)["banks_unswizzled.svg"] == 1.0
