"""``cute_py.emit.to_c``: symbolic index expressions printed as integer C.

The decisive test compiles the printed expressions with gcc into a tiny C
program and compares what it computes with sympy's exact evaluation over many
integer substitutions (with ``int`` operands, and with ``int64=True`` on values
whose products overflow 32 bits). The same text is also compiled by NVRTC as
CUDA when NVRTC is installed.
"""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest
import sympy

import cute_py.emit
from cute_py import Layout, cosize, logical_divide, size, zipped_divide
from cute_py.emit.cprint import CPrintError, to_c
from cute_py.symbolic import indices, symbols

M, N, K = symbols("M N K")
i, j = indices("i j")
ARGS = (M, N, K, i, j)
GCC = shutil.which("gcc") or shutil.which("cc")


# ---------------------------------------------------------------------------
# exact text


@pytest.mark.parametrize("expr, text", [
    (M, "M"),
    (7, "7"),
    (sympy.Integer(-3), "-3"),
    (M * K + 1, "K * M + 1"),
    (M - 1, "M - 1"),
    (3 * K - M, "3 * K - M"),
    (-M, "-M"),
    (-3 * M, "-3 * M"),
    (sympy.floor(i / 128), "i / 128"),
    (sympy.floor(i / M), "i / M"),
    (sympy.floor(i / (4 * M)), "i / (4 * M)"),
    (sympy.floor((M + 127) / 128), "(M + 127) / 128"),
    (sympy.ceiling(M / 128), "(M + 127) / 128"),
    (sympy.ceiling(M / K), "(M + K - 1) / K"),
    (sympy.Mod(i, 128), "i % 128"),
    (sympy.Mod(i, M * N), "i % (M * N)"),
    (sympy.Mod(M + 3, 4) * K, "K * ((M + 3) % 4)"),
    (K * sympy.floor(i / 128), "K * (i / 128)"),
    (-sympy.floor(M / 4), "-(M / 4)"),
    (sympy.floor(sympy.floor(i / 4) / M), "(i / 4) / M"),
    (sympy.Min(M - 128 * j, 128), "min(128, M - 128 * j)"),
    (sympy.Max(M, K, 4), "max(4, max(K, M))"),
    ((M + 1) ** 2, "(M + 1) * (M + 1)"),
    (M ** 3, "M * M * M"),
    (sympy.Lt(i, M), "i < M"),
    (sympy.And(sympy.Lt(i, M), sympy.Lt(j, N)), "i < M && j < N"),
    (sympy.Or(sympy.Ge(i, M), sympy.Eq(j, 0)), "j == 0 || i >= M"),
])
def test_text(expr, text):
    assert to_c(expr) == text


def test_int64_casts_symbols_and_suffixes_literals():
    assert to_c(M * K + 1, int64=True) == "(long long)K * (long long)M + 1ll"
    assert to_c(sympy.ceiling(M / 128), int64=True) == "((long long)M + 127ll) / 128ll"
    assert to_c(5, int64=True) == "5ll"


def test_names_map_symbols_to_c_text():
    m = indices("m")
    assert to_c(128 * m + i, names={m: "blockIdx.x", "i": "threadIdx.x"}) == "threadIdx.x + 128 * blockIdx.x"
    assert to_c(2 * m, names={m: "a + b"}) == "2 * (a + b)"
    assert to_c(m, names={m: "blockIdx.x"}, int64=True) == "(long long)blockIdx.x"


def test_layout_expressions():
    A = Layout((M, K), (K, 1))
    D = logical_divide(A, (128, 64))
    assert to_c(D.shape[0][1]) == "(M + 127) / 128"
    assert to_c(Layout((128, M), (K, 128 * K))(i)) == "K * (i % 128) + 128 * K * (i / 128)"
    assert to_c(cosize(A)) == "K * M"
    assert cute_py.emit.to_c is to_c


@pytest.mark.parametrize("expr", [
    M / 2, sympy.Rational(1, 2), sympy.Float(1.5), sympy.pi, sympy.sqrt(M), M ** -1, K / M, M ** 17, M ** K,
    sympy.sin(M), sympy.floor(-M / 4), sympy.floor(M / -K), sympy.Mod(M, -K),
    sympy.floor(sympy.Rational(1, 3) * sympy.Symbol("x")),
])
def test_what_has_no_integer_c_form_raises(expr):
    with pytest.raises(CPrintError) as info:
        to_c(expr)
    assert str(info.value).startswith("to_c:")


def test_bad_symbol_names_and_inputs():
    with pytest.raises(CPrintError, match="not a C identifier"):
        to_c(sympy.Symbol("int", integer=True))
    with pytest.raises(CPrintError, match="not a C identifier"):
        to_c(sympy.Symbol("a.b", integer=True))
    assert to_c(sympy.Symbol("int", integer=True), names={"int": "n_int"}) == "n_int"
    with pytest.raises(TypeError):
        to_c(True)
    with pytest.raises(TypeError):
        to_c([1, 2])


# ---------------------------------------------------------------------------
# compiled and run: C's integer arithmetic against sympy's exact evaluation


def _random_layout_exprs(seed: int, count: int):
    """Offsets L(i) and extents of random layouts with symbolic extents (non-negative strides)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(1, 3)
        shape = tuple(rng.choice([M, N, K, 2, 3, 4]) for _ in range(n))
        if rng.random() < 0.5:
            L = Layout(shape)                                     # compact: symbolic strides
        else:
            L = Layout(shape, tuple(rng.choice([1, 2, 8, M, K]) for _ in range(n)))
        out.append(L(i))
        out.append(cosize(L))
        out.append(size(zipped_divide(L, (rng.choice([2, 4, 16]),)).shape[1]))
    return out


FIXED = [
    M * K + i, 3 * K - M, -M + 2 * N, -3 * M * K + i, -3 * sympy.floor(i / 4),
    sympy.floor(i / 128), sympy.floor(i / M), sympy.floor(i / (4 * M)),
    sympy.ceiling(M / 128), sympy.ceiling(M / K), sympy.ceiling((M * K + 7) / 8), sympy.Mod(i, M),
    sympy.Mod(i + 3, 4) * K, sympy.Mod(sympy.floor(i / M), N) * K + sympy.Mod(i, M),
    sympy.Min(M - sympy.Min(M, 128 * j), 128), sympy.Max(M, K, 4), (M + 1) ** 2, (M + 2 * K) ** 3,
    -sympy.floor(M / 4), sympy.floor(sympy.floor(i / 4) / M), K * sympy.ceiling(M / 128) * sympy.ceiling(N / 64),
    sympy.Lt(i, M), sympy.And(sympy.Lt(i, M), sympy.Lt(j, N)), sympy.Or(sympy.Ge(i, M * N), sympy.Eq(j, 0)),
    sympy.Not(sympy.Lt(j, K)), sympy.Abs(M - K), i - M * sympy.floor(i / M),
]


def _exact(expr, sub) -> int:
    if not isinstance(expr, sympy.Basic):
        return int(expr)
    v = expr.xreplace({s: sympy.Integer(x) for s, x in sub.items()})
    if v in (sympy.true, sympy.false):
        return int(bool(v))
    assert v.is_Integer, (expr, sub, v)
    return int(v)


def _run_c(tmp_path, exprs, samples, int64: bool):
    texts = [to_c(e, int64=int64) for e in exprs]
    for t in texts:
        assert "." not in t and "double" not in t and "float" not in t, t
    params = ", ".join(f"int {s.name}" for s in ARGS)
    fns = "\n".join(f"static long long f{n}({params}) {{ return (long long)({t}); }}" for n, t in enumerate(texts))
    calls = "\n".join(f'    printf(" %lld", f{n}({", ".join(s.name for s in ARGS)}));' for n in range(len(texts)))
    src = f"""#include <stdio.h>
#include <stdlib.h>
static long long min(long long a, long long b) {{ return a < b ? a : b; }}
static long long max(long long a, long long b) {{ return a > b ? a : b; }}
{fns}
int main(void) {{
  long long v[{len(ARGS)}];
  while (scanf("%lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4]) == 5) {{
    int {", ".join(f"{s.name} = (int)v[{n}]" for n, s in enumerate(ARGS))};
{calls}
    printf("\\n");
  }}
  return 0;
}}
"""
    c = tmp_path / "exprs.c"
    exe = tmp_path / "exprs"
    c.write_text(src)
    r = subprocess.run([GCC, "-std=c99", "-O1", "-Wall", "-Werror", "-Wno-unused-function", "-o", str(exe), str(c)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    stdin = "\n".join(" ".join(str(s[a]) for a in ARGS) for s in samples) + "\n"
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(samples)
    for sub, line in zip(samples, out):
        got = [int(x) for x in line.split()]
        want = [_exact(e, sub) for e in exprs]
        bad = [(str(e), t, g, w) for e, t, g, w in zip(exprs, texts, got, want) if g != w]
        assert not bad, f"values {sub}: {bad[:5]}"


@pytest.mark.skipif(GCC is None, reason="no C compiler")
def test_printed_expressions_compute_what_sympy_computes(tmp_path):
    rng = random.Random(1)
    exprs = FIXED + _random_layout_exprs(seed=7, count=25)
    samples = [{M: rng.randint(1, 64), N: rng.randint(1, 64), K: rng.randint(1, 64),
                i: rng.randint(0, 4000), j: rng.randint(0, 40)} for _ in range(150)]
    samples += [{M: 1, N: 1, K: 1, i: 0, j: 0}, {M: 128, N: 64, K: 128, i: 127, j: 1}]
    _run_c(tmp_path, exprs, samples, int64=False)


@pytest.mark.skipif(GCC is None, reason="no C compiler")
def test_int64_printing_survives_values_that_overflow_32_bits(tmp_path):
    rng = random.Random(2)
    exprs = [M * K + i, K * sympy.Mod(i, 128) + 128 * K * sympy.floor(i / 128), sympy.ceiling(M * K / 64),
             Layout((M, K), (K, 1))(j, i), cosize(Layout((M, N), (1, M))) + i, sympy.Min(M * K, 3 * i),
             sympy.Mod(M * K, i + 1), sympy.floor(M * N / (K + 1))]
    samples = [{M: rng.randint(1, 1 << 17), N: rng.randint(1, 1 << 17), K: rng.randint(1, 1 << 17),
                i: rng.randint(0, (1 << 31) - 1), j: rng.randint(0, 1 << 10)} for _ in range(100)]
    assert any(abs(_exact(e, s)) >= 1 << 31 for e in exprs for s in samples)  # 32-bit math would be wrong
    _run_c(tmp_path, exprs, samples, int64=True)


def test_printed_expressions_compile_as_cuda_with_nvrtc():
    from cute_py.runtime import errors as rt_errors

    try:
        from cute_py.runtime import compile as nvrtc_compile
        exprs = FIXED + _random_layout_exprs(seed=3, count=10)
        body = "\n".join(f"  out[{n}] = {to_c(e)};\n  out64[{n}] = {to_c(e, int64=True)};" for n, e in enumerate(exprs))
        params = ", ".join(f"int {s.name}" for s in ARGS)
        src = f'extern "C" __global__ void k(long long* out, long long* out64, {params}) {{\n{body}\n}}\n'
        program = nvrtc_compile(src)
    except rt_errors.NvrtcNotFoundError as e:  # pragma: no cover - CI has NVRTC
        pytest.skip(str(e))
    assert program.spills["k"] == 0
