"""The mainloops: one work unit's loads (the producer, :mod:`.producer`) and math (the consumers).

- :class:`~.warpspecialized.WarpSpecialized` (``"tma_ws"``): SS wgmma, cooperative or ping-pong consumers;
- :class:`~.promoting.Promoting` (``"promoting"``): fp8 with each K tile's sums promoted into f32 accumulators.

A spec's mainloop follows from its fields: a spec that promotes (blockwise scales, or per-tensor and row-wise
scales without fast accumulation) takes the promoting one.
"""

from __future__ import annotations

from .promoting import Promoting
from .warpspecialized import WarpSpecialized

__all__ = ["MAINLOOPS", "mainloop_class", "WarpSpecialized", "Promoting"]

MAINLOOPS = {cls.name: cls for cls in (
    WarpSpecialized,
    Promoting,
)}


def mainloop_class(spec):
    """The mainloop class of ``spec``."""
    return MAINLOOPS["promoting" if spec.promotes else "tma_ws"]
