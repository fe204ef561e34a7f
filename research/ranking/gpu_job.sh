#!/usr/bin/env bash
# The default consensus's GLocalKD component on the 14 rows' folds (gpu_job.py), bounded in time,
# then ALWAYS packs what finished (gpu_job.py also repacks after each fold): every
# out/<row>/fold<k>.glocalkd.npz and out/gpu_job.json go into $OUT/glocalkd_folds.tar.gz (unpack it
# into research/ranking/out/). The data: research/ranking/pack_datasets.sh packs what the rows read.
# Usage (repository root):
#   DATASETS=/path/to/datasets OUT=/some/folder [TIMEOUT=400] [PROCS=6] research/ranking/gpu_job.sh \
#       [--device cuda] [--epochs N] [ROW ...]
set -u
cd "$(dirname "$0")/../.." || exit 1
timeout_s=${TIMEOUT:-400}
out=$(mkdir -p "${OUT:-research/ranking/out/packed}" && cd "${OUT:-research/ranking/out/packed}" && pwd)
export DATASETS=${DATASETS:-../shared/datasets}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD"
echo "gpu_job: timeout ${timeout_s} s, ${PROCS:-6} processes x ${OMP_NUM_THREADS} threads, data ${DATASETS}"
start=$SECONDS
timeout -k 10 "$timeout_s" "${PYTHON:-python3}" research/ranking/gpu_job.py --procs "${PROCS:-6}" \
    --pack "$out/glocalkd_folds.tar.gz" "$@"
rc=$?
[ "$rc" = 124 ] && echo "gpu_job: stopped by the timeout after $((SECONDS - start)) s; packing what finished"
cd "${FOLD_SCORES_OUT:-research/ranking/out}" || exit 1
rm -f -- */*.part "$out"/*.part
files=$(ls -- gpu_job.json */fold*.glocalkd.npz 2>/dev/null)
# shellcheck disable=SC2086
tar czf "$out/glocalkd_folds.tar.gz" $files
echo "gpu_job: packed $(ls -- */fold*.glocalkd.npz 2>/dev/null | wc -l) folds into $out/glocalkd_folds.tar.gz" \
     "($(du -k "$out/glocalkd_folds.tar.gz" | cut -f1) KB), exit $rc, $((SECONDS - start)) s"
exit $rc
