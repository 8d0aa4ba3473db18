"""The on-disk compile cache: cubin + log + parsed report + PTX, keyed by what determines the output.

Location: ``$CUTE_PY_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/cute_py``,
else ``~/.cache/cute_py``; entries live in its ``nvrtc/`` folder as
``<key>.cubin`` and ``<key>.json``. ``CUTE_PY_CACHE=0`` (or ``off``,
``false``, ``no``) disables the cache. The key is the sha256 of the source,
the file name, the options, the arch, the NVRTC version and this format's
version, so changing any of them misses. Writes are atomic (temporary file
then rename); a damaged entry reads as a miss. Deleting the folder is always
safe.

>>> key = cache_key("int x;", ("-lineinfo",), "sm_90a", (13, 0), "kernel.cu")
>>> len(key), key == cache_key("int x;", ("-G",), "sm_90a", (13, 0), "kernel.cu")
(64, False)
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

__all__ = ["cache_dir", "cache_enabled", "cache_key", "load", "store", "clear", "atomic_write", "FORMAT"]

FORMAT = 2
"""Version of the entry format; part of the key, so a new format never reads an old entry (2: the meta holds the
PTX NVRTC generated on the way to the cubin)."""


def cache_dir() -> Path:
    """The cache folder (not created): ``$CUTE_PY_CACHE_DIR``, ``$XDG_CACHE_HOME/cute_py`` or ``~/.cache/cute_py``.

    >>> isinstance(cache_dir(), Path)
    True
    """
    explicit = os.environ.get("CUTE_PY_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "cute_py"


def cache_enabled() -> bool:
    """False when ``CUTE_PY_CACHE`` is ``0``, ``off``, ``false`` or ``no`` (case-insensitive).

    >>> cache_enabled() in (True, False)
    True
    """
    return os.environ.get("CUTE_PY_CACHE", "1").strip().lower() not in ("0", "off", "false", "no")


def cache_key(source: str, options, arch: str, nvrtc_version, name: str) -> str:
    """The sha256 hex digest identifying one compilation.

    Postcondition: equal inputs give equal keys; changing any input (one
    character of source, an option, its order, the arch, the NVRTC version
    or the file name) gives a different key.

    >>> cache_key("a", (), "sm_90a", (13, 5), "k.cu") != cache_key("a", (), "sm_90a", (13, 0), "k.cu")
    True
    """
    h = hashlib.sha256()
    head = json.dumps({"format": FORMAT, "options": list(options), "arch": arch,
                       "nvrtc": list(nvrtc_version), "name": name}, sort_keys=True)
    h.update(head.encode())
    h.update(b"\0")
    h.update(source.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _paths(key: str, folder: Path | None = None):
    d = (folder or cache_dir()) / "nvrtc"
    return d / f"{key}.cubin", d / f"{key}.json"


def load(key: str, folder: Path | None = None):
    """``(cubin bytes, metadata dict)`` of a cached entry, or ``None`` (missing, disabled or damaged).

    >>> load("0" * 64, Path("/nonexistent")) is None
    True
    """
    if not cache_enabled():
        return None
    cubin_path, meta_path = _paths(key, folder)
    try:
        meta = json.loads(meta_path.read_text())
        cubin = cubin_path.read_bytes()
    except (OSError, ValueError):
        return None
    if meta.get("format") != FORMAT or meta.get("cubin_sha256") != hashlib.sha256(cubin).hexdigest():
        return None
    return cubin, meta


def store(key: str, cubin: bytes, meta: dict, folder: Path | None = None) -> bool:
    """Write an entry atomically; returns False (and leaves no partial entry) if the folder is not writable.

    ``meta`` must be JSON-serializable; ``format`` and ``cubin_sha256`` are added.

    >>> store("0" * 64, b"x", {}, Path("/proc/forbidden"))
    False
    """
    if not cache_enabled():
        return False
    cubin_path, meta_path = _paths(key, folder)
    meta = dict(meta, format=FORMAT, cubin_sha256=hashlib.sha256(cubin).hexdigest())
    try:
        cubin_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cubin_path, cubin)
        atomic_write(meta_path, json.dumps(meta, indent=1).encode())   # written last: the entry's commit
    except OSError:
        return False
    return True


def clear(folder: Path | None = None) -> int:
    """Delete every cache entry; returns how many files were removed.

    >>> clear(Path("/nonexistent"))
    0
    """
    d = (folder or cache_dir()) / "nvrtc"
    n = 0
    if d.is_dir():
        for p in d.iterdir():
            if p.suffix in (".cubin", ".json", ".tmp"):
                try:
                    p.unlink()
                    n += 1
                except OSError:
                    pass
    return n


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``: readers see the
    old file or the new one, never a partial write (also used for the autotune file).

    >>> import tempfile; p = Path(tempfile.mkdtemp()) / "x.json"; atomic_write(p, b"{}"); p.read_bytes()
    b'{}'
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
