"""The tuned table: the spec :func:`cute_py.autotune` measured fastest per problem and GPU, kept on disk.

The table lives in ``autotune.json`` in cute_py's cache folder
(:func:`cute_py.runtime.cache.cache_dir`) as ``{"format": FORMAT, "entries":
{problem_key: entry}}``. :func:`lookup` reads it back (the file once per
process and cache folder, the GPU's name once), so ``cute_py.gemm`` can ask it
on every call; :func:`record` merges and replaces the file atomically;
:func:`generation` changes whenever the table does, so whoever caches a choice
made from it (the prepared launches of ``cute_py.gemm``) knows to choose again.
``CUTE_PY_AUTOTUNE=0`` (or ``off``, ``false``, ``no``) turns lookups off.

>>> from cute_py.problem import Problem
>>> problem_key(Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16"), device="NVIDIA H100 80GB HBM3")
'v1|NVIDIA H100 80GB HBM3|4096x4096x4096|a:K b:K|bf16->bf16|beta:0 bias:- act:- c:row'
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import threading
from pathlib import Path

from ._version import __version__
from .emit.spec import GemmSpec
from .runtime import device as _device
from .runtime.cache import atomic_write, cache_dir

__all__ = ["problem_key", "lookup", "record", "clear_cache", "cache_path", "generation", "FORMAT", "ENV",
           "FILENAME"]

FORMAT = 1
"""Version of the file's keys and entries; part of every key, so a new format never reads an old entry."""
ENV = "CUTE_PY_AUTOTUNE"
"""The environment variable that turns the table off; ``0``, ``off``, ``false`` or ``no`` makes :func:`lookup`
return None."""
FILENAME = "autotune.json"
_OFF = ("0", "off", "false", "no")


def problem_key(problem, *, device: str | None = None) -> str:
    """The table's key of ``problem`` (a :class:`~cute_py.problem.Problem`) on one GPU (``device``: its name;
    default the current GPU's). Leading dimensions and ``d_tma`` are not part of it: they limit the
    epilogue, not the problem.

    Postcondition: two problems share a key exactly when their sizes, majors, types and epilogue (and
    :data:`FORMAT`) are equal.

    >>> from cute_py.problem import Problem
    >>> problem_key(Problem(128, 4096, 4096, "K", "MN", "bf16", "f32", True, "col", "gelu"), device="H100")
    'v1|H100|128x4096x4096|a:K b:MN|bf16->f32|beta:1 bias:col act:gelu c:row'
    """
    if device is None:
        device = _device_name()
        if device is None:
            device = _device().name                      # raises NoDeviceError with its reason
    p = problem
    return (f"v{FORMAT}|{device}|{p.shape}|a:{p.a_major} b:{p.b_major}|{p.dtype}->{p.out_dtype}|"
            f"beta:{int(bool(p.beta))} bias:{p.bias or '-'} act:{p.activation or '-'} "
            f"c:{'row' if p.c_row_major else 'col'}"
            + (f" scale:{p.scale}{' fast' if p.fast_accum else ''}{' ue8m0' if p.scale_type == 'ue8m0' else ''}"
               if p.scale else "")
            + (f" groups:{p.grouping}" if p.grouping else ""))


def cache_path() -> Path:
    """``autotune.json`` in cute_py's cache folder (:func:`cute_py.runtime.cache.cache_dir`).

    >>> cache_path().name
    'autotune.json'
    """
    return cache_dir() / FILENAME


class _State:
    """The table in memory: loaded once per cache location, updated by :func:`record`."""

    lock = threading.Lock()
    where = None            # (CUTE_PY_CACHE_DIR, XDG_CACHE_HOME) the entries were read under
    entries: dict = {}
    specs: dict = {}        # key -> GemmSpec | None, parsed on first lookup
    device = None           # the current GPU's name, once known
    device_known = False
    generation = 0


def generation() -> int:
    """A number that changes whenever :func:`record` or :func:`clear_cache` changes the table (or a lookup reads
    it from another cache folder): a choice made from the table is current while this is unchanged. One
    attribute read, so a hot path can ask it on every call.

    >>> import os, tempfile
    >>> os.environ["CUTE_PY_CACHE_DIR"] = tempfile.mkdtemp()
    >>> before = generation(); clear_cache(); generation() != before
    False
    True
    >>> del os.environ["CUTE_PY_CACHE_DIR"]
    """
    return _State.generation


def _where():
    env = os.environ
    return env.get("CUTE_PY_CACHE_DIR"), env.get("XDG_CACHE_HOME")


def _entries() -> dict:
    where = _where()
    if where != _State.where:
        with _State.lock:
            _State.entries, _State.specs, _State.where = _read(cache_path()), {}, where
            _State.generation += 1
    return _State.entries


def _read(path: Path) -> dict:
    """The entries of the file at ``path``; {} if it is missing, damaged or of another format."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        return {}
    return data["entries"]


def _device_name():
    if not _State.device_known:
        try:
            _State.device = _device().name
        except Exception:  # noqa: BLE001 - no GPU: nothing was tuned for this machine
            _State.device = None
        _State.device_known = True
    return _State.device


def _enabled() -> bool:
    v = os.environ.get(ENV)
    return v is None or v.strip().lower() not in _OFF


def lookup(problem) -> GemmSpec | None:
    """The spec recorded for ``problem`` on the current GPU, or None.

    None also when :data:`ENV` is ``0``, there is no GPU, the entry was made by another cute_py version or
    names a spec that is no longer valid, or the recorded spec does not fit the problem (e.g. its epilogue is
    "tma" and ``problem.d_tma`` is False). Fast: after the first call it is one dict lookup.

    >>> import os; os.environ["CUTE_PY_AUTOTUNE"] = "0"
    >>> from cute_py.problem import Problem
    >>> lookup(Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16")) is None
    True
    >>> del os.environ["CUTE_PY_AUTOTUNE"]
    """
    if not _enabled():
        return None
    entries = _entries()
    if not entries:
        return None
    device = _device_name()
    if device is None:
        return None
    key = problem_key(problem, device=device)
    if key not in entries:                   # a miss costs no memory: serving many shapes must not grow a cache
        return None
    try:
        spec = _State.specs[key]
    except KeyError:
        spec = _State.specs[key] = _parse_entry(entries.get(key))
    if spec is not None and problem.mismatches(spec):
        return None
    return spec


def _parse_entry(entry) -> GemmSpec | None:
    if not isinstance(entry, dict) or entry.get("cute_py") != __version__:
        return None
    try:
        return GemmSpec.from_dict(entry["spec"])
    except Exception:  # noqa: BLE001 - an entry the current GemmSpec cannot read (or refuses) is a miss
        return None


def record(problem, spec: GemmSpec, seconds: float, *, device: str | None = None) -> Path:
    """Store ``spec`` (measured at ``seconds`` per call) as the best for ``problem`` on ``device`` (default the
    current GPU); returns the file written. The file is re-read first (merging entries written by other
    processes) and replaced atomically. An unwritable cache folder raises ``OSError``.

    >>> import tempfile, os
    >>> from cute_py.emit import GemmSpec
    >>> from cute_py.problem import Problem
    >>> os.environ["CUTE_PY_CACHE_DIR"] = tempfile.mkdtemp()
    >>> p = Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16")
    >>> record(p, GemmSpec(tile=(128, 256, 64)), 0.2e-3, device="H100").name
    'autotune.json'
    >>> _entries()[problem_key(p, device="H100")]["time_ms"]
    0.2
    >>> clear_cache(); del os.environ["CUTE_PY_CACHE_DIR"]
    True
    """
    if device is None:
        device = _device().name
    key = problem_key(problem, device=device)
    entry = {"spec": spec.to_dict(), "name": spec.name, "time_ms": round(seconds * 1e3, 6),
             "tflops": round(problem.flops / seconds / 1e12, 1), "cute_py": __version__,
             "recorded": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    path = cache_path()
    with _State.lock:
        entries = _read(path)
        entries[key] = entry
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"format": FORMAT, "entries": entries}, indent=1, sort_keys=True).encode())
        _State.entries, _State.specs, _State.where = entries, {}, _where()
        _State.generation += 1
    return path


def clear_cache() -> bool:
    """Delete the table's file and forget its entries in memory; True if a file was removed.

    >>> import tempfile, os
    >>> os.environ["CUTE_PY_CACHE_DIR"] = tempfile.mkdtemp()
    >>> clear_cache()
    False
    >>> del os.environ["CUTE_PY_CACHE_DIR"]
    """
    with _State.lock:
        _State.entries, _State.specs, _State.where = {}, {}, None
        _State.generation += 1
        try:
            cache_path().unlink()
        except FileNotFoundError:
            return False
    return True
