#!/usr/bin/env bash
# Promoting fp8 tiles against each other and torch (the version 13 measurement of benchmarks/NOTES.md): every shape
# of DeepSeek-V3's table at the given M, in blockwise and promoted per-tensor modes, with BN in 128, 144 and 160.
#   bash benchmarks/fp8_tiles.sh [M ...]        (default 4096; output lines: benchmarks/fp8_variants.py)
set -u
export PYTHONPATH=$PWD PYTHONPYCACHEPREFIX=$PWD/.pyc CUTE_PY_CACHE_DIR=$PWD/.kc
unset PYTHONDONTWRITEBYTECODE
ms=${*:-4096}
for m in $ms; do
  for nk in 2112,7168 24576,1536 32768,512 7168,16384 4096,7168 7168,2048; do
    for mode in block tensor; do
      python benchmarks/fp8_variants.py "$m,$nk" $mode --burst 9 \
        "tile=(128,128,128)" "tile=(128,144,128)" "tile=(128,160,128)" 2>&1 | grep -v Warning
    done
  done
done
