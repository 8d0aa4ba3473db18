# Probes of the groups-along-K illegal address (benchmarks/NOTES.md, version 10c), then the GPU suite: run on the GPU
# machine from the repo root.
export PYTHONPATH=$PWD PYTHONPYCACHEPREFIX=$PWD/.pyc CUTE_PY_CACHE_DIR=$PWD/.kc; unset PYTHONDONTWRITEBYTECODE
p() { echo "$*: $(timeout 100 python benchmarks/gk_probe.py "$@" 2>&1 | tail -1)"; }
{ p split-K; p ping-pong; p split-K --variant none; p "loads without TMA"; p "direct epilogue"; } > $OUT/probe.txt 2>&1
P=("groups along M" split-K "groups along M" ping-pong "groups along M" "direct epilogue" "groups along M" "beta, bias, gelu" "groups along M" "loads without TMA" "groups along K" split-K "groups along K" ping-pong "groups along K" "direct epilogue" "groups along K" "beta, bias, gelu" "groups along K" "loads without TMA" "groups along K" "one tile per CTA" batch split-K batch ping-pong "groups along M" "cluster 2x1" batch "beta, bias, gelu" "groups along K" split-K)
timeout 200 python benchmarks/pair_sequence.py "${P[@]}" > $OUT/seq_nosync.txt 2>&1
timeout 420 python -m pytest -n 14 -q tests/gpu -p no:cacheprovider > $OUT/gpu_suite.txt 2>&1
cat $OUT/probe.txt $OUT/seq_nosync.txt; tail -15 $OUT/gpu_suite.txt
