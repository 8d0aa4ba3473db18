# Probes of the groups-along-K illegal address (benchmarks/NOTES.md, version 10c), then the grouped GPU tests: run on
# the GPU machine from the repo root.
export PYTHONPATH=$PWD PYTHONPYCACHEPREFIX=$PWD/.pyc CUTE_PY_CACHE_DIR=$PWD/.kc; unset PYTHONDONTWRITEBYTECODE
p() { echo "$*: $(timeout 100 python benchmarks/gk_probe.py "$@" 2>&1 | tail -1)"; }
{ p split-K; p ping-pong; p "loads without TMA"; } > $OUT/probe.txt 2>&1
timeout 400 python -m pytest -n 14 -p no:cacheprovider -o addopts="" -q tests/gpu/test_gpu_feature_pairs.py tests/gpu/test_gpu_grouped.py tests/gpu/test_gpu_fp8.py > $OUT/gpu_tests.txt 2>&1
cat $OUT/probe.txt; tail -4 $OUT/gpu_tests.txt
