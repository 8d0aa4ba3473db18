"""The notebooks in notebooks/ run top to bottom, show their key results, and are stored without outputs.

Each notebook is executed headless with nbclient in a fresh ``python3`` kernel
whose working directory is the repository root (so ``import cute_py`` finds
the checkout even without ``pip install -e .``). A cell that raises fails the
test; so does a missing key output (a conflict count, a layout, a descriptor)
or a notebook that draws no picture. The files on disk are never modified.
"""

import importlib.util
import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

# Text each notebook must print (stdout or a displayed object's text), and how many pictures
# (image/svg+xml outputs) it must show at least.
EXPECTED = {
    "01_layout_algebra_tour.ipynb": {
        "svg": 6,
        "text": [
            "L(2, 3) = 19",
            "((2,2),(2,2)):((1,4),(8,32))   -> (2,4,2):(1,4,32)   same function: True",
            "[0, 6, 1, 7, 2, 8] == [0, 6, 1, 7, 2, 8]",
            "DivisibilityError - composition: shape divisibility condition",
            "result = ((2,3),2):((6,1),3)",  # explain("composition", ...)
            "complement(4:2, 24) = (2,3):(1,8)",
            "covers [0, 24) exactly once: True",
            "right_inverse((8,4):(4,1)) = (4,8):(8,1)  L(R(i)) == i: True",
            "zipped_divide   ((4,8),(3,4)):((32,1),(128,8))",
            "flat_divide     (4,8,3,4):(32,1,128,8)",
            "blocked: ((2,3),(5,4)):((5,10),(1,30))",
            "raked:   ((3,2),(4,5)):((10,5),(30,1))",
            "Sw<3,3,3> o 0 o (8,64):(64,1) ComposedLayout",
        ],
    },
    "02_swizzles_and_bank_conflicts.ipynb": {
        "svg": 3,
        "text": [
            "swizzled: Sw<3,3,3> o 0 o ((8,8),(64,1)):((64,512),(1,0))",
            "row 7: [7, 6, 5, 4, 3, 2, 1, 0]",
            "plain     max 8-way, wavefronts 32 (ideal 4)",
            "swizzled  max 1-way, wavefronts 4 (ideal 4)",
            "plain:    8 warp requests: 256 wavefronts (ideal 32); 8-way conflicts",
            "16 warp requests: 512 wavefronts (ideal 64); 8-way conflicts, 8.00x the ideal",
            "16 warp requests: 64 wavefronts (ideal 64); conflict-free",
            "wavefronts 32 -> 4 (8.00x fewer); max 8-way -> 1-way",
            "wavefronts 512 -> 64 (8.00x fewer); max 8-way -> 1-way",
            "Sw<2,3,3>: max 8-way -> 2-way",
            "128-byte rows: suggest Sw<3,3,3>   GMMA atom Sw<3,3,3> o 0 o (8,64):(64,1)",
        ],
    },
    "03_mma_tv_layouts.ipynb": {
        "svg": 5,
        "text": [
            "C TV layout matches the PTX fragment formula: True",
            "C[9, 2] is value 2 of thread 5",
            "GMMA C layout matches row lane/4 + 16*warp + 8*v1, column 2*(lane%4) + v0 + 8*v2: True",
            "C TV layout of the whole tile: ((4,8,8),((2,2,16),(1,1))):((256,1,16),((128,8,1024),(0,0)))",
            "ArithTuple(0,0) o ((2,2,16),1,1):((1@1,8@0,8@1),0,0)",
            "thread 0, first 8 values: [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]",
            "same elements as the identity partition: True",
            "ldmatrix destination == MMA A fragment for all 128 threads: True",
            "wgmma descriptor 0x4000004000010000 (K-major, B128)",
            "warpgroup 1's A descriptor: + 512   = sA(64, 0) * 2 // 16 = 512",
            "dim 1: gmem mode 0, globalDim 4096, stride 8192 bytes, box 128",
        ],
    },
    "04_gemm_from_a_spec.ipynb": {
        "svg": 1,
        "text": [
            "name: cute_gemm_sm90_bf16_tn_128x256x64_s4_c2_obf16_dr",
            "GemmSpec: 5 constraint(s) violated:",
            "stage tile Sw<3,3,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))  (128x64, 16384 bytes)",
            "wgmma descriptor 0x4000004000010000 (K-major, B128)",
            "A: consumer 1's slice  + 512  = sA(64, 0) * 2 B / 16 = 512",
            "dim 1: gmem mode 0, globalDim M, stride 2*K bytes, box 128",
            "consumer thread 0 holds (m, n): [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]",
            "tma_load_2d(stage + kOffA + 0u, &tma_a, full, kb * kBK, w.m_tile * kBM);",
            "constexpr u64 kDescA = 0x4000004000010000ull;",
            "emitted (m, n) formulas == partition_C of the tiled MMA: True",
            "registers per thread, 0 spill bytes",
            "ptxas warnings: none",
            "e4m3  atom SM90_64x128x32_F32E4M3E4M3_SS_TN",
            "same descriptor bits: True",
            "promotion: 1 chunk of 128 columns; a thread's scale rows per 64-row block: (0, 8)",
            "int scale_slot(int v) { return (v / 2) % 2; }",
        ],
        # without an sm_90 GPU (CI) the GPU cells must say they stop; on one, the launch must check exactly
        "one_of": [("no GPU: stopping after the compile step", ", exact: True")],
    },
    "06_f2_and_linear_layouts.ipynb": {
        "svg": 2,
        "text": [
            "Sw<3,4,3> as a layout: (128,8):(^1,^144)",
            "same function on 1024 offsets: True",
            "Sw o Sw = 1024:1",
            "complement(4:^5, 64) = (4,4):(1,16)",
            " - lane=1 -> (0, 2)",
            "   register=2 -> (8, 0)",
            "back to CuTe: ((4,8),(2,2)):((32,1),(16,8))  equal: True",
            "  T0:R0  T0:R1  T1:R0  T1:R1  T2:R0  T2:R1  T3:R0  T3:R1",
            "Triton's bases, offset -> (dim0, dim1): [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 8], "
            "[2, 16], [4, 32], [8, 0], [16, 0], [32, 0]]",
            "offset 512 holds (8, 0) and smem(8, 0) = 512",
            "same offsets as the tile: True",
        ],
    },
    "07_designing_a_smem_layout.ipynb": {
        "svg": 2,
        "text": [
            "ldmatrix  16 warp requests: 512 wavefronts (ideal 64); 8-way conflicts, 8.00x the ideal",
            "  layout Sw<3,3,3> o 0 o (64,64):(64,1)",
            "same offsets as the GMMA atom tile: True",
            "read ldmatrix  max 1-way, bound 1, vectors whole True, same as bank_conflicts: True",
            "together: bound 1 | TMA: True | a row-major box",
            "synthesize_smem_layout: no layout keeps every vector whole",
            "  layout Sw<3,3,3> o 0 o (64,64):(1,64)",
            "  TMA: yes (a column-major box)",
            "swizzle family: 2-way at best;",
            "the F2 family has a conflict-free layout with 3 XOR terms",
            "3 XOR terms, conflict-free: True",
            "least worst conflict: 2-way; the whole family searched: True",
            "proven lower bound: 2-way, met: True",
            "their phases span 6 index bits",
            "-> GemmSpec(swizzle=128); plan's A stage tile Sw<3,3,3> o 0 o ((8,16),(64,1)):((64,512),(1,0)), "
            "same function: True",
        ],
    },
    "05_cute_py_in_pytorch.ipynb": {
        "svg": 0,
        "text": [
            "cute_py::gemm(Tensor a, Tensor b, Tensor? c=None, Tensor? bias=None, float alpha=1., float beta=0., "
            "str? activation=None, ScalarType? out_dtype=None) -> Tensor",
            "y = relu(x @ w.T + 1): shape (4, 32), y[0, 0] = 65.0",
            "swapped 3 nn.Linear modules for cute_py.torch.Linear\n",
            "(0): cute_py.torch.Linear(in_features=64, out_features=256, bias=True)",
            "state_dict keys equal: True",
            "graph breaks: 0",
            "compiled == eager: True",
        ],
        # without a GPU (CI) the training and graph cells say they skip; on an H100 they must train and replay
        "one_of": [("no GPU: skipped (training)", "loss went down: True"),
                   ("no GPU: skipped (CUDA graph)", "graph replay matches eager: True")],
    },
}

_MISSING = [m for m in ("nbclient", "nbformat", "ipykernel") if importlib.util.find_spec(m) is None]
needs_jupyter = pytest.mark.skipif(
    bool(_MISSING),
    reason=f"executing notebooks needs {', '.join(_MISSING)} (pip install -e '.[test]')",
)


def _notebook_names():
    return sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


def test_the_notebooks_exist():
    assert set(EXPECTED) <= set(_notebook_names()), f"missing notebooks: {set(EXPECTED) - set(_notebook_names())}"


@pytest.mark.parametrize("name", _notebook_names())
def test_notebook_is_stored_without_outputs(name):
    """Notebooks are committed stripped: no outputs, no execution counts, the python3 kernel."""
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    assert nb.get("nbformat") == 4
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3", f"{name}: kernelspec must be python3"
    dirty = [i for i, c in enumerate(nb["cells"])
             if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, (f"{name}: code cells {dirty} have outputs or execution counts; strip them "
                       f"(e.g. jupyter nbconvert --clear-output --inplace {name})")


@pytest.mark.parametrize("name", _notebook_names())
def test_notebook_is_valid_nbformat_with_cell_ids(name):
    """nbformat 4.5 gives every cell a unique id; without one, nbformat warns on every read (and may add random
    ones on save, so the file changes each time it is opened)."""
    nbformat = pytest.importorskip("nbformat")
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    missing = [i for i, c in enumerate(nb["cells"]) if "id" not in c]
    assert not missing, f"{name}: cells {missing} have no id"
    ids = [c["id"] for c in nb["cells"]]
    assert len(set(ids)) == len(ids), f"{name}: duplicate cell ids"
    nbformat.validate(nbformat.from_dict(nb))


def test_notebook_05_says_what_swap_linear_does():
    """Its text said the 10-wide last layer "stayed an nn.Linear" while its output says all 3 were swapped."""
    torch = pytest.importorskip("torch")
    ct = pytest.importorskip("cute_py.torch")
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64),
                                torch.nn.ReLU(), torch.nn.Linear(64, 10)).to(torch.bfloat16)
    assert str(ct.swap_linear(model)).startswith("swapped 3 nn.Linear modules")
    nb = json.loads((NOTEBOOKS / "05_cute_py_in_pytorch.ipynb").read_text(encoding="utf-8"))
    text = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "stayed an `nn.Linear`" not in text and "all three layers were swapped" in text


def _tracked_notebooks():
    """``{path: text}`` of the notebooks git tracks, as staged (what a commit stores); None without git."""
    if shutil.which("git") is None:
        return None
    ls = subprocess.run(["git", "ls-files", "-z", "--", "notebooks/*.ipynb"], cwd=ROOT, capture_output=True,
                        check=False)
    if ls.returncode != 0:
        return None
    paths = [p for p in ls.stdout.decode().split("\0") if p]
    return {p: subprocess.run(["git", "show", f":{p}"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
            for p in paths}


def test_notebooks_in_git_have_no_outputs():
    tracked = _tracked_notebooks()
    if tracked is None:
        pytest.skip("not a git checkout (or git is missing)")
    for path, text in tracked.items():
        nb = json.loads(text)
        dirty = [i for i, c in enumerate(nb["cells"])
                 if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count") is not None)]
        assert not dirty, f"{path} is stored in git with outputs in code cells {dirty}"


def _text_of(output) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    return output.get("data", {}).get("text/plain", "")


def _shown_text(cells) -> str:
    """The text of the cells' outputs as Jupyter shows it.

    The kernel may split one ``print`` into several stream messages (at any byte,
    e.g. mid-line when the kernel is slow); Jupyter concatenates consecutive stream
    chunks of the same name into one block. Do the same, then separate the blocks
    (and the cells) with newlines.
    """
    pieces = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        last_stream = None  # name of the stream the last piece came from, None after a non-stream output
        for output in cell.get("outputs", []):
            is_stream = output.get("output_type") == "stream"
            if is_stream and output.get("name") == last_stream:
                pieces[-1] += _text_of(output)
            else:
                pieces.append(_text_of(output))
            last_stream = output.get("name") if is_stream else None
    return "\n".join(pieces)


def _stream(name, text):
    return {"output_type": "stream", "name": name, "text": text}


def test_split_prints_are_joined_as_jupyter_shows_them():
    # One print split mid-line into two chunks (what a loaded kernel does now and then)
    # reads as one line; chunks of another stream, or after a displayed object, stay apart.
    line = "plain:    8 warp requests: 256 wavefronts (ideal 32); 8-way conflicts\n"
    cells = [{"cell_type": "code", "outputs": [_stream("stdout", line[:40]), _stream("stdout", line[40:])]},
             {"cell_type": "code", "outputs": [_stream("stdout", "a"), _stream("stderr", "b"),
                                               {"output_type": "display_data", "data": {"text/plain": "c"}},
                                               _stream("stdout", "d")]}]
    assert _shown_text(cells) == line + "\na\nb\nc\nd"


@needs_jupyter
@pytest.mark.parametrize("name", _notebook_names())
def test_notebook_executes(name, tmp_path, monkeypatch, record_property):
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    # Keep the kernel's connection files and IPython profile out of the user's home.
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}})
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as e:
        pytest.fail(f"{name}: a cell raised:\n{e}")
    record_property("seconds", round(time.perf_counter() - start, 2))

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, f"{name}: error outputs: {[(o['ename'], o['evalue']) for o in errors]}"
    stderr = [o["text"] for o in outputs if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    assert not stderr, f"{name}: cells wrote to stderr (warnings?):\n{''.join(stderr)}"

    text = _shown_text(nb.cells)
    expected = EXPECTED.get(name, {})
    missing = [s for s in expected.get("text", []) if s not in text]
    assert not missing, f"{name}: expected output not found: {missing}"
    unmet = [alts for alts in expected.get("one_of", []) if not any(a in text for a in alts)]
    assert not unmet, f"{name}: none of these outputs found: {unmet}"
    svgs = sum("image/svg+xml" in o.get("data", {}) for o in outputs)
    assert svgs >= expected.get("svg", 1), f"{name}: {svgs} pictures shown, expected at least {expected.get('svg', 1)}"
