#!/usr/bin/env bash
# Before and after a change of the emitter, in one run on the GPU machine: each benchmark runs once on the old
# tree and once on the new one, alternating old, new, old, new (the GPU's clock drifts between processes, so each
# run's ratio against the PyTorch equivalent, timed in the same process, is what compares), plus stream-K
# against the data-parallel schedule on the new tree. Results go to $RES (one folder, tarred by the caller).
#
#   OLD=.bench_old RES=/tmp/res bash benchmarks/before_after.sh
#
# OLD holds an older checkout's cute_py/ and benchmarks/ (git archive <commit> cute_py benchmarks | tar -x -C OLD).
set -u
OLD=${OLD:?the old tree}
RES=${RES:?the results folder}
mkdir -p "$RES"
SHAPES="4096,4096,4096 8192,8192,8192 2048,2048,2048 512,4096,4096 128,14336,4096"
FP8="4096,7168,16384 4096,2112,7168 128,24576,1536"
for round in 1 2; do
  for side in old new; do
    root=$([ $side = old ] && echo "$OLD" || echo .)
    echo "== bf16 sweep, $side, round $round"
    timeout 150 python3 "$root/benchmarks/gemm_vs_cublas.py" --shapes $SHAPES --layouts tn nn nt tt --burst 10 \
      --sustained 0 --out-dir "$RES" --tag "bf16-$side-$round" 2>&1 | tail -4
  done
done
for side in old new; do
  root=$([ $side = old ] && echo "$OLD" || echo .)
  echo "== fp8, $side"
  timeout 120 python3 "$root/benchmarks/fp8_vs_torch.py" --shapes $FP8 --modes block row tensor-fast --burst 10 \
    --out-dir "$RES" --tag "fp8-$side" 2>&1 | tail -3
  echo "== MoE, $side"
  timeout 120 python3 "$root/benchmarks/grouped_vs_torch.py" --models qwen3-30b-a3b --tokens 4096 --routings uniform \
    --no-bmm --burst 8 --out-dir "$RES" --tag "moe-$side" 2>&1 | tail -3
done
echo "== stream-K"
timeout 150 python3 benchmarks/stream_k.py --out-dir "$RES" --tag stream-k 2>&1 | tail -14
