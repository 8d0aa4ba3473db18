"""``EventTimer``: GPU time of back-to-back calls between two CUDA events (driver API).

The one timer of cute_py: autotune, the CLI's ``--bench`` and the benchmarks
measure with it. Each measurement records a start event, makes ``calls`` calls
(the host enqueues ahead of the GPU, so the host's per-call work is hidden
wherever the kernels outlast it), records an end event and waits for it.
The events are destroyed by :meth:`EventTimer.close` (or leaving a ``with``).

>>> with EventTimer() as timer:                        # doctest: +SKIP
...     seconds = timer.per_call(lambda i: launch(), 10)
"""

from __future__ import annotations

from .driver import _check, _driver, _stream_handle, device

__all__ = ["EventTimer"]


class EventTimer:
    """Two CUDA events on ``stream`` (default: the legacy default stream, which is torch's and cupy's default
    current stream and so where ``cute_py.gemm`` launches without ``stream=`` unless another stream is made
    current; a ``CUstream``, an int handle, or an object with ``cuda_stream``/``ptr``).

    >>> with EventTimer() as t:                                         # doctest: +SKIP
    ...     t.per_call(lambda i: cute_py.gemm(a, b, out=d), 10) * 1e3     # milliseconds per call
    0.199
    """

    def __init__(self, stream=None):
        device()                                       # the primary context, as the launches use it
        self._d = _driver()
        self._stream = _stream_handle(stream)
        self._start = _check(self._d.cuEventCreate(0), "cuEventCreate")
        self._end = _check(self._d.cuEventCreate(0), "cuEventCreate")

    def seconds(self, fn) -> float:
        """Seconds between the two events around one ``fn()`` (which may enqueue any number of launches)."""
        d = self._d
        _check(d.cuEventRecord(self._start, self._stream), "cuEventRecord")
        fn()
        _check(d.cuEventRecord(self._end, self._stream), "cuEventRecord")
        _check(d.cuEventSynchronize(self._end), "cuEventSynchronize")
        return _check(d.cuEventElapsedTime(self._start, self._end), "cuEventElapsedTime") / 1e3

    def per_call(self, fn, calls: int) -> float:
        """Seconds per call over ``calls`` back-to-back calls ``fn(i)``, ``i`` in ``range(calls)``."""
        def batch():
            for i in range(calls):
                fn(i)
        return self.seconds(batch) / calls

    def close(self) -> None:
        """Destroy the events (idempotent)."""
        for name in ("_start", "_end"):
            ev = getattr(self, name, None)
            if ev is not None:
                self._d.cuEventDestroy(ev)
                setattr(self, name, None)

    def __enter__(self) -> "EventTimer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
