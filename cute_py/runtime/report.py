"""The ptxas resource report in an NVRTC log, parsed: registers, spills, smem, stack, diagnostics.

:func:`cute_py.runtime.compile` always passes ``--ptxas-options=-v``, so the
log holds, per entry function (kernel)::

    ptxas info    : Compiling entry function 'k' for 'sm_90a'
    ptxas info    : Function properties for k
    ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 10 registers, used 1 barriers, 4000 bytes smem

and diagnostics such as ``ptxas info : (C7511) Potential Performance Loss:
wgmma.mma_async instructions are serialized ... in the function 'k'``.
Pure text processing: no CUDA needed.

>>> r = parse_report('''ptxas info    : Compiling entry function 'k' for 'sm_90a'
... ptxas info    : Function properties for k
... ptxas         .     0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
... ptxas info    : Used 10 registers, used 1 barriers, 4000 bytes smem''')
>>> r.kernels["k"].registers, r.kernels["k"].spill_bytes, r.kernels["k"].smem_bytes
(10, 12, 4000)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["KernelReport", "Diagnostic", "Report", "parse_report", "SERIALIZATION_CODES", "is_serialization"]

SERIALIZATION_CODES = frozenset({"C7508", "C7509", "C7510", "C7511"})
"""ptxas codes that :func:`cute_py.runtime.compile` turns into a
:class:`~cute_py.runtime.errors.CompileError` (``strict=True``).

C7509/C7510/C7511: "wgmma.mma_async instructions are serialized due to ..."
(extern calls, a pipeline crossing a function boundary, insufficient
register resources): the kernel still runs, but every wgmma waits for the
previous one. C7508: "'setmaxnreg' ignored; unable to determine register
count at entry" (the kernel lacks ``__launch_bounds__``). Any other
diagnostic saying "wgmma.mma_async instructions are serialized" counts too.
"""


@dataclass(frozen=True)
class KernelReport:
    """ptxas's resource figures for one entry function (kernel).

    ``registers`` per thread, named ``barriers``, static ``smem_bytes``
    (excluding dynamic smem), ``stack_bytes`` (stack frame), spill store and
    load bytes; ``spill_bytes`` is their sum.

    >>> KernelReport("k", registers=32, spill_stores=4).spill_bytes
    4
    """

    name: str
    registers: int = 0
    barriers: int = 0
    smem_bytes: int = 0
    stack_bytes: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    cmem_bytes: int = 0

    @property
    def spill_bytes(self) -> int:
        """Spill stores plus spill loads, in bytes (0 means no spilling)."""
        return self.spill_stores + self.spill_loads


@dataclass(frozen=True)
class Diagnostic:
    """One warning-like line of the log.

    ``source`` is ``"ptxas"`` or ``"nvrtc"`` (front end); ``code`` is a ptxas
    code (``"C7511"``) or a front-end number (``"177-D"``) or ``None``;
    ``kernel`` the function the line names (``None`` when it names none, as
    C7508 does); ``line`` the source line (front end) or PTX line (ptxas),
    if given; ``text`` the whole log line.

    >>> d = parse_report("ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.").warnings[0]
    >>> d.code, d.kernel, d.serializes
    ('C7508', None, True)
    """

    source: str
    code: str | None
    kernel: str | None
    line: int | None
    text: str

    @property
    def serializes(self) -> bool:
        """True for the diagnostics :data:`SERIALIZATION_CODES` describes (fatal under ``strict=True``)."""
        return is_serialization(self)


def is_serialization(d: Diagnostic) -> bool:
    """Whether ``d`` reports wgmma serialization or an ignored ``setmaxnreg``.

    >>> is_serialization(Diagnostic("ptxas", "C7517", "k", None, "wgmma.wait_group is injected"))
    False
    """
    return d.code in SERIALIZATION_CODES or "instructions are serialized" in d.text


@dataclass(frozen=True)
class Report:
    """Every kernel's :class:`KernelReport` (by name, in log order) and every :class:`Diagnostic`.

    >>> parse_report("").kernels
    {}
    """

    kernels: dict = field(default_factory=dict)
    warnings: tuple = ()

    def to_json(self) -> dict:
        """A JSON-serializable dict (what the on-disk cache stores)."""
        return {"kernels": [vars(k) for k in self.kernels.values()],
                "warnings": [vars(w) for w in self.warnings]}

    @classmethod
    def from_json(cls, data: dict) -> "Report":
        """Inverse of :meth:`to_json`.

        >>> r = parse_report("ptxas info    : Compiling entry function 'k' for 'sm_90a'")
        >>> Report.from_json(r.to_json()) == r
        True
        """
        kernels = {k["name"]: KernelReport(**k) for k in data.get("kernels", ())}
        return cls(kernels, tuple(Diagnostic(**w) for w in data.get("warnings", ())))


_ENTRY = re.compile(r"^ptxas\s+info\s*:\s*Compiling entry function '([^']+)'")
_PROPS = re.compile(r"^ptxas\s+info\s*:\s*Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"^ptxas\s+info\s*:\s*Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[0\]")
_PTXAS_DIAG = re.compile(r"^ptxas\s+(info|warning)\s*:\s*(.*)$")
_CODE = re.compile(r"\((C\d{3,5})\)")
_FUNC = re.compile(r"function '([^']+)'")
_PTX_LINE = re.compile(r"\bline (\d+)\b")
_NVRTC_WARN = re.compile(r"^(\S.*?)\((\d+)\): warning #?([\w-]*):?\s*(.*)$")


def parse_report(log: str) -> Report:
    """Parse an NVRTC log (with ``--ptxas-options=-v`` output) into a :class:`Report`.

    Figures belong to the entry function named by the nearest preceding
    ``Compiling entry function`` line (device functions' "Function
    properties" blocks are skipped). Diagnostics are ptxas lines with a
    ``(Cnnnn)`` code or of severity ``warning``, and front-end
    ``file(line): warning`` lines; each names its kernel when the text does.

    >>> rep = parse_report('''ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function 'wg' in line 72
    ... ptxas info    : Compiling entry function 'wg' for 'sm_90a'
    ... ptxas info    : Function properties for wg
    ... ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ... ptxas info    : Used 58 registers, used 0 barriers''')
    >>> rep.kernels["wg"].registers, [(w.code, w.kernel, w.serializes) for w in rep.warnings]
    (58, [('C7511', 'wg', True)])
    """
    figures: dict = {}
    order: list = []
    warnings = []
    current = None          # entry function whose figures follow
    props_for = None        # the function the last "Function properties" line named
    for raw in log.splitlines():
        line = raw.rstrip()
        m = _ENTRY.match(line)
        if m:
            current = m.group(1)
            if current not in figures:
                figures[current] = {"name": current}
                order.append(current)
            props_for = None
            continue
        m = _PROPS.match(line)
        if m:
            props_for = m.group(1)
            continue
        m = _FRAME.search(line)
        if m and line.startswith("ptxas"):
            if current is not None and props_for == current:
                f = figures[current]
                f["stack_bytes"], f["spill_stores"], f["spill_loads"] = (int(x) for x in m.groups())
            continue
        m = _USED.match(line)
        if m:
            if current is not None and props_for in (None, current):
                f = figures[current]
                f["registers"] = int(m.group(1))
                for key, pat in (("barriers", _BARRIERS), ("smem_bytes", _SMEM), ("cmem_bytes", _CMEM)):
                    mm = pat.search(line)
                    if mm:
                        f[key] = int(mm.group(1))
            continue
        m = _PTXAS_DIAG.match(line)
        if m:
            severity, text = m.groups()
            code = _CODE.search(text)
            if code or severity == "warning":
                fn = _FUNC.search(text)
                ln = _PTX_LINE.search(text)
                warnings.append(Diagnostic("ptxas", code.group(1) if code else None, fn.group(1) if fn else None,
                                           int(ln.group(1)) if ln else None, line))
            continue
        m = _NVRTC_WARN.match(line)
        if m:
            warnings.append(Diagnostic("nvrtc", m.group(3) or None, None, int(m.group(2)), line))
    kernels = {name: KernelReport(**figures[name]) for name in order}
    return Report(kernels, tuple(warnings))
