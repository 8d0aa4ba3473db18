#!/usr/bin/env bash
# The GPU checks of a kernel change, in one device call: the GPU suite, memcheck of every scheduler and mainloop,
# and (with --bench) the stream-K benchmarks. Run from the repository root; logs go to $OUT (default ./gpu-out).
#   bash benchmarks/gpu_check.sh [--tests PATTERN] [--no-tests] [--bench]
set -u
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONPYCACHEPREFIX=$PWD/.pyc CUTE_PY_CACHE_DIR=$PWD/.kc
unset PYTHONDONTWRITEBYTECODE
tests=tests/gpu; run_tests=1; bench=0
while [ $# -gt 0 ]; do
  case $1 in
    --tests) tests=$2; shift ;;
    --no-tests) run_tests=0 ;;
    --bench) bench=1 ;;
  esac
  shift
done
nvidia-smi -L
if [ $run_tests = 1 ]; then
  python -m pytest -q -o addopts="" -n 14 -p no:cacheprovider $tests > "$OUT/gpu_tests.log" 2>&1
  echo "gpu tests rc=$?"; tail -n 25 "$OUT/gpu_tests.log"
fi
compute-sanitizer --tool memcheck --report-api-errors no python benchmarks/memcheck_collectives.py \
  > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "WRONG|ERROR SUMMARY|wrong" "$OUT/memcheck.log"
if [ $bench = 1 ]; then
  python benchmarks/stream_k_groups.py --out-dir "$OUT" --tag h200-stream-k-groups 2>&1 | tail -n 15
fi
