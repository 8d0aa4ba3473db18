"""The kernel's collectives: Python objects that print its parts from a plan's layout facts.

    Kernel skeleton (cute_py.emit.kernel) = Pipeline + Scheduler + Mainloop (producer, consumers) + Epilogue

- :mod:`.pipeline`: the shared-memory ring, its full and empty mbarriers, ``PipelineState``;
- :mod:`.schedulers`: ``Work`` and ``Scheduler::next`` (persistent tiles, split-K, stream-K, groups along M or K,
  batches), and the fixup of tiles whose K was shared out;
- :mod:`.mainloops`: the producer's loads (TMA or the producer threads' own, per operand) and the consumers'
  wgmma (cooperative or ping-pong; fp8 promotion);
- :mod:`.epilogues`: the ops on a finished tile and the store policy (TMA through swizzled staging, or direct).

Each owns its spec constraints, its rows of the parameter table, its named barriers, the PTX wrappers it calls and
its device code behind a fixed C interface (:mod:`.base`); :mod:`.compose` picks a spec's four and puts their
tables together. A new collective is a new module and one line in its kind's registry.

This package's ``__init__`` imports none of its modules: :mod:`cute_py.emit.spec` reads the scheduler registry
(:mod:`.schedulers`) while the mainloops and epilogues read the spec's rules.
"""
