#!/usr/bin/env bash
# Pack exactly the data files the 14 rows read (research/consensus/dump.py's ROWS) into one
# .tar.xz (xz -9), for a machine without ../shared/datasets: unpack it and point DATASETS at it.
# Usage (repository root): research/ranking/pack_datasets.sh [TARGET] (default .gpudata/datasets.tar.xz)
set -eu
cd "$(dirname "$0")/../.."
target=$(realpath -m "${1:-.gpudata/datasets.tar.xz}")
data=${DATASETS:-../shared/datasets}
mkdir -p "$(dirname "$target")"
# the data folders / files of ROWS (training and testing files)
names=$(PYTHONPATH=. "${PYTHON:-python3}" -c "
from research.consensus.dump import ROWS
print(' '.join(sorted({n for d, _p, t, _r in ROWS.values() for n in (d, t) if n})))")
tar cf - -C "$data" $names | xz -9 -T1 > "$target.part"
mv "$target.part" "$target"
echo "packed $names into $target ($(du -k "$target" | cut -f1) KB)"
