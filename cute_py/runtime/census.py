"""A census of the PTX instructions that decide what a Hopper GEMM does, counted in NVRTC's PTX.

The emitted CUDA can be restructured freely as long as the kernel keeps doing
the same work: the same wgmma shapes as often, the same bulk tensor copies,
the same mbarrier traffic, the same register hand-over. This module counts
those instructions in the PTX NVRTC generated on the way to the cubin
(``Program.ptx`` of :func:`cute_py.runtime.compile`), after inlining and unrolling, so the
count is of static instructions of the kernel, not of the source's lines.
The tests pin the census per shipped spec (``tests/test_emit_pins.py``) beside
registers, spills and shared memory: a pin on behaviour, not on text.

The kinds counted, each keyed by its full mnemonic (``wgmma.mma_async...m64n128k16.f32.bf16.bf16``):
wgmma (issues, fence, commit, wait), bulk and bulk tensor copies (loads,
stores, their commits and waits, prefetches of the descriptors), cp.async,
mbarrier operations, setmaxnreg, named barriers (``bar.*``, ``barrier.*``),
stmatrix, fences, atomics and reductions, and cluster barriers.

>>> ptx = '''
...   wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f1}, %rd1, %rd2, p, 1, 1, 0, 0;
...   @%p1 mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r1], %r2;
...   mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1], %r2;
...   add.s32 %r3, %r4, 1;'''
>>> instruction_census(ptx)
{'mbarrier.try_wait.parity.shared::cta.b64': 2, 'wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16': 1}
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["CENSUS_KINDS", "instruction_census"]

CENSUS_KINDS = ("wgmma.", "cp.async.", "mbarrier.", "setmaxnreg.", "bar.", "barrier.", "stmatrix.", "fence.",
                "atom.", "red.", "elect.", "griddepcontrol.")
"""The opcode prefixes counted (an instruction whose mnemonic starts with one of them)."""

_INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)", re.M)


def instruction_census(ptx: str) -> dict:
    """``{mnemonic: count}`` of the instructions of ``ptx`` whose mnemonic starts with one of
    :data:`CENSUS_KINDS`, sorted by mnemonic; a predicate guard (``@%p``) does not change the key.

    Postcondition: ``sum(instruction_census(ptx).values())`` is the number of such instruction lines.

    >>> instruction_census("  @!%p1 bar.sync 1, 128;\\n  bar.sync 1, 128;\\n  ld.global.u32 %r1, [%rd1];")
    {'bar.sync': 2}
    """
    if not isinstance(ptx, str):
        raise TypeError(f"instruction_census: ptx must be str, got {type(ptx).__name__}")
    counts = Counter(m for m in _INSTRUCTION.findall(ptx) if m.startswith(CENSUS_KINDS))
    return dict(sorted(counts.items()))
