"""The layout explorer: a notebook widget (:func:`explore`) and an offline page (:func:`explore_html`).

Both run the same front end, ``cute_py/viz/static/explore.js`` (one ES module,
no dependencies, shipped in the package): a text box holding the layout in
CuTe syntax, dtype, swizzle, view and access pickers, the picture, the facts
of the cell under the mouse, the per-warp report of the view, the wgmma
descriptor and TMA box of a shared-memory tile, and two exports (the SVG
shown, and the Python that rebuilds it). What it draws is a *scene*
(:mod:`cute_py.viz.explore_scene`), computed here.

* :func:`explore` returns an `anywidget <https://anywidget.dev>`_ widget
  (JupyterLab, Jupyter Notebook, VS Code). Typing in the text box sends the
  text to Python, which parses it with :func:`cute_py.parse` and sends back
  the new scene, or one line saying what is wrong (shown under the box, never
  a traceback). anywidget is the ``explore`` extra (``pip install
  "cute-py[explore]"``); it is imported by :func:`explore` only.
* :func:`explore_html` writes the same explorer into one HTML file that works
  offline: the module and the scene are inlined, and a small local model
  stands in for Jupyter's. Retyping a layout there is evaluated in the page
  (integer layouts, ``Sw<B,M,S> o O o L``, TV layouts over their tile: offsets,
  swizzle, banks, threads and values); the per-warp reports, and atoms and
  tilings, need Python, and the page says so.

>>> import cute_py as cp
>>> page = explore_html(cp.parse("Sw<3,3,3> o 0 o (8,64):(64,1)"), view="banks")
>>> page.startswith("<!DOCTYPE html>") and "export default" in page and "http" not in page.split("<body>")[1][:200]
True
"""

from __future__ import annotations

import functools
import json
import pathlib

from ..atoms import CopyAtom, MMAAtom, make_copy_atom
from ..atoms import get as get_atom
from ..layouts import ComposedLayout, Layout, ParseError, Swizzle, composition, parse
from ..layouts import int_tuple as it
from ..layouts.errors import LayoutError
from ..layouts.tensor import Tensor
from ._grid import copy_parts, mma_parts
from .explore_scene import ACCESSES, VIEWS, kind_of, scene

__all__ = ["explore", "explore_html", "page", "ExplorerState", "DTYPES", "STATIC", "ACCESSES"]

STATIC = pathlib.Path(__file__).with_name("static")
"""The folder of the front end (``explore.js``), shipped as package data."""
DTYPES = ("e4m3", "e5m2", "s8", "u8", "f16", "bf16", "s16", "u16", "tf32", "f32", "s32", "u32", "f64")
"""The element types the dtype picker offers (any name :func:`cute_py.dtype` knows is accepted)."""
_INPUTS = ("text", "dtype", "view", "access", "swizzle")
_NOT_EDITABLE = "this {} is built in Python; its text box is read-only (change the code and explore it again)"


def _module_source() -> str:
    return (STATIC / "explore.js").read_text(encoding="utf-8")


def _swizzle(text: str):
    """The swizzle picker's value: ``""`` (none) or ``"Sw<B,M,S>"``."""
    if not text:
        return None
    sw = parse(text)
    if not isinstance(sw, Swizzle):
        raise ValueError(f"explore: swizzle must be 'Sw<B,M,S>' or '', got {text!r}")
    return sw


def _with_swizzle(layout, sw):
    """``layout`` under ``sw`` (replacing a composed layout's outer swizzle); itself when ``sw`` is None."""
    if sw is None:
        return layout
    if isinstance(layout, ComposedLayout):
        return ComposedLayout(sw, layout.offset, layout.inner)
    return composition(sw, layout)


class ExplorerState:
    """What the explorer is looking at: the object it was given (kept for what text cannot rebuild) and the
    options; :meth:`update` turns the inputs into a scene or an error line."""

    def __init__(self, obj, *, dtype, view, access, swizzle, tile):
        self.base = obj
        self.kind = "tv" if tile is not None else kind_of(obj)
        if self.kind == "mma" and dtype is not None:
            raise ValueError(f"explore: an MMA atom or tiling names its own element types; dtype={dtype!r} would "
                             f"change nothing")
        own = getattr(obj, "dtype", None) if self.kind == "tensor" and not obj.is_identity else None
        dtype = dtype or (own.name if own is not None else "bf16")
        self.tile = tile
        text = str(obj.layout if self.kind == "tensor" else obj)
        if self.kind in ("mma", "copy"):
            text = obj.name if isinstance(obj, (MMAAtom, CopyAtom)) else (
                mma_parts(obj) if self.kind == "mma" else copy_parts(obj))[0]
        self.inputs = {"text": text, "dtype": dtype, "view": view or ("offsets" if self.kind in ("layout", "tensor")
                                                                     else "threads"),
                       "access": access, "swizzle": swizzle or ""}
        self.scene = self.compute(self.inputs)          # bad options raise here, at the call

    def editable(self) -> bool:
        return not (self.kind in ("mma", "copy") and not isinstance(self.base, (MMAAtom, CopyAtom)))

    def object_of(self, text: str, dtype: str):
        """The object the text box names: CuTe text through :func:`cute_py.parse` (an atom by its name)."""
        if self.kind in ("mma", "copy"):
            if not self.editable():
                if text.strip() != self.inputs_text():
                    raise ValueError(_NOT_EDITABLE.format("tiling"))
                return self.base
            op = get_atom(text.strip())
            return op if isinstance(op, MMAAtom) else make_copy_atom(op, dtype)
        obj = parse(text)
        if it.is_int(obj) or (isinstance(obj, tuple) and all(it.is_int(x) or isinstance(x, tuple)
                                                             for x in it.flatten_to_tuple(obj))):
            obj = Layout(obj)
        if not isinstance(obj, (Layout, ComposedLayout)):
            raise ValueError(f"explore: {text!r} is a {type(obj).__name__}, not a layout" +
                             ("; compose a swizzle with a tile: Sw<3,3,3> o 0 o (8,64):(64,1)"
                              if isinstance(obj, Swizzle) else ""))
        if self.kind == "tensor":
            return Tensor(self.base.engine, obj, self.base.offset, dtype=self.base.dtype)
        return obj

    def inputs_text(self) -> str:
        return self.inputs["text"]

    def compute(self, inputs: dict) -> dict:
        obj = self.object_of(inputs["text"], inputs["dtype"])
        sw = _swizzle(inputs["swizzle"])
        if sw is not None and self.kind in ("mma", "copy"):
            raise ValueError(f"explore: a swizzle applies to a layout, not to a {self.kind} atom")
        if sw is not None:
            obj = (Tensor(obj.engine, _with_swizzle(obj.layout, sw), obj.offset, dtype=obj.dtype)
                   if self.kind == "tensor" else _with_swizzle(obj, sw))
        sc = scene(obj, dtype=inputs["dtype"], view=inputs["view"], access=inputs["access"], tile=self.tile,
                   text=inputs["text"])
        sc["editable"] = self.editable()
        sc["dtypes"] = _dtype_bits(inputs["dtype"])
        if not self.editable():
            sc["notes"].append(_NOT_EDITABLE.format("tiling"))
        return sc

    def update(self, inputs: dict):
        """``(scene, "")`` for new inputs, or ``(None, error line)``: the error names what is wrong."""
        try:
            return self.compute(inputs), ""
        except (LayoutError, ParseError, TypeError, ValueError, KeyError) as e:
            return None, " ".join(str(e).split("\n")[0].split())


def _dtype_bits(current: str) -> dict:
    from ..arch.sm90.requests import as_dtype

    names = list(DTYPES) + ([current] if current not in DTYPES else [])
    return {as_dtype("explore", n).name: as_dtype("explore", n).bits for n in names}


def _check_options(view, access, swizzle, dtype, op: str = "explore"):
    if view is not None and view not in VIEWS:
        raise ValueError(f"{op}: view must be one of {', '.join(VIEWS)}, got {view!r}")
    if not isinstance(access, str):
        raise TypeError(f"{op}: access must be a str (e.g. 'row128', 'ldmatrix', a TV layout), got "
                        f"{type(access).__name__}")
    for name, val in (("swizzle", swizzle), ("dtype", dtype)):
        if val is not None and not isinstance(val, str):
            raise TypeError(f"{op}: {name} must be a str, got {type(val).__name__}")


@functools.lru_cache(maxsize=None)
def _widget_class():
    try:
        import anywidget
        import traitlets
    except ImportError:
        raise ImportError('cute_py.viz.explore needs anywidget: pip install "cute-py[explore]"') from None

    class Explorer(anywidget.AnyWidget):
        """The explorer widget; ``scene`` and ``error`` follow the five inputs (see :mod:`cute_py.viz.explorer`)."""

        _esm = _module_source()
        text = traitlets.Unicode().tag(sync=True)
        dtype = traitlets.Unicode().tag(sync=True)
        view = traitlets.Unicode().tag(sync=True)
        access = traitlets.Unicode().tag(sync=True)
        swizzle = traitlets.Unicode().tag(sync=True)
        scene = traitlets.Dict().tag(sync=True)
        error = traitlets.Unicode("").tag(sync=True)

        def __init__(self, state: ExplorerState):
            self._state = state
            super().__init__(scene=state.scene, **state.inputs)

        @traitlets.observe(*_INPUTS)
        def _inputs_changed(self, _change):
            sc, err = self._state.update({k: getattr(self, k) for k in _INPUTS})
            if sc is not None:
                self.scene = sc
            self.error = err

    return Explorer


def explore(obj, *, dtype: str | None = None, view: str | None = None, access: str = "row128", swizzle: str | None = None,
            tile=None):
    """An interactive explorer of ``obj`` (an anywidget widget; needs the ``explore`` extra).

    ``obj``: a Layout, a ComposedLayout (a swizzled tile), a Tensor, an MMA or copy atom, a TiledMMA or a
    TiledCopy; a rank-2 TV layout ``(thread, value) -> m + M*n`` with ``tile=(M, N)``. ``view``: ``"offsets"``
    (default for layouts), ``"threads"`` (the thread and value of ``access`` that touch each element; the only
    view of TV layouts, atoms and tilings), ``"banks"`` (4-byte banks and the per-warp conflicts of ``access``)
    or ``"coalescing"`` (the per-warp sectors of ``access`` over the layout as global memory). ``access``: one
    of :data:`~cute_py.viz.explore_scene.ACCESSES` (``"row128"`` TMA rows, ``"vec32"``/``"vec64"``/
    ``"vec128"``, ``"ldmatrix"``, ``"wgmma"``: core matrices of 8 rows x 16 bytes, as swizzle synthesis models
    them) or any access :func:`cute_py.viz.bank_conflicts` takes as text (a copy op
    name, a TV layout). ``swizzle``: ``"Sw<B,M,S>"`` put over the layout (replacing its outer swizzle).
    ``dtype``: the element type of banks and coalescing (default ``"bf16"``; a tensor's own, which another
    ``dtype`` contradicts; none for an MMA atom or tiling, whose name fixes its types). ``access`` is a str.

    The widget's ``scene`` trait holds what it shows and ``error`` the line under the text box; setting
    ``text`` (or ``dtype``, ``view``, ``access``, ``swizzle``) recomputes them, as typing does. Options that
    cannot apply raise here (a TypeError or ValueError naming ``explore`` and the option), and so does an
    object the explorer cannot draw. Text that does not parse never raises: it sets ``error``.

    >>> from cute_py import parse
    >>> w = explore(parse("Sw<3,3,3> o 0 o (16,64):(64,1)"), view="banks", access="ldmatrix")
    >>> w.scene["report"]["summary"]
    '4 warp requests: 16 wavefronts (ideal 16); conflict-free'
    >>> w.text = "(16,64):(64,1)"                   # typing in the box: the unswizzled tile
    >>> w.scene["report"]["summary"]
    '4 warp requests: 128 wavefronts (ideal 16); 8-way conflicts, 8.00x the ideal'
    >>> w.text = "(16,64):(64,"
    >>> w.error
    'parse: expected an integer, found end of input at position 12'
    """
    _check_options(view, access, swizzle, dtype)
    state = ExplorerState(obj, dtype=dtype, view=view, access=access, swizzle=swizzle, tile=tile)
    return _widget_class()(state)


def _inline(value) -> str:
    """JSON that is safe inside a ``<script>`` element."""
    return json.dumps(value).replace("</", "<\\/").replace("<!--", "<\\!--")


_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title></head>
<body>
<div id="cpx-root"></div>
<script type="application/json" id="cpx-state">{state}</script>
<script type="application/json" id="cpx-module">{module}</script>
<script type="module">
const text = (id) => JSON.parse(document.getElementById(id).textContent);
const url = URL.createObjectURL(new Blob([text("cpx-module")], {{type: "text/javascript"}}));
const mod = await import(url);
window.cpxModel = mod.localModel(text("cpx-state"));
mod.default.render({{model: window.cpxModel, el: document.getElementById("cpx-root")}});
</script>
</body></html>
"""


def explore_html(obj, *, dtype: str | None = None, view: str | None = None, access: str = "row128",
                 swizzle: str | None = None, tile=None) -> str:
    """One offline HTML page running the explorer of ``obj`` (options as :func:`explore`); nothing is written.

    The page needs no network and no Python: it holds the front end and the scene computed now. Retyped text
    is evaluated in the page where it can be (see the module docstring). Does not need anywidget. Raises as
    :func:`explore` does, naming ``explore_html``.

    >>> from cute_py import parse
    >>> page = explore_html(parse("(8,64):(64,1)"))
    >>> page.startswith("<!DOCTYPE html>"), "https://" in page
    (True, False)
    """
    _check_options(view, access, swizzle, dtype, "explore_html")
    kind_of(obj, "explore_html")
    return page(ExplorerState(obj, dtype=dtype, view=view, access=access, swizzle=swizzle, tile=tile))


def page(state: ExplorerState) -> str:
    """The HTML page of an explorer state (:func:`explore_html`; the CLI checks the state's scene first)."""
    title = str(state.scene["title"]).replace("&", "&amp;").replace("<", "&lt;")
    return _PAGE.format(title=title, state=_inline({**state.inputs, "scene": state.scene, "error": ""}),
                        module=_inline(_module_source()))
