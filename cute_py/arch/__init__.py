"""Architecture facts derived from layouts (``cute_py.arch.sm90`` for Hopper). Pure Python."""
