#!/usr/bin/env bash
# The known-anomaly path with the classifier view, measured through the product (research/README.md,
# "The known-anomaly path with the classifier view"): `glocalkd evaluate ROW --method consensus
# --known-anomalies 10` on every fold of the 14 rows, one process per fold (`--only K`), the longest
# first, PROCS at a time, bounded by TIMEOUT seconds. Each fold's JSON holds both arms from the same
# fit: its AUC (with the classifier view) and its readout `weighed-views` (the same weighed consensus
# without it), and the share of its held-out normal graphs with p < 0.05. Everything finished is packed
# into $OUT/known_classifier.tar.gz; research/ranking/known_classifier_rule.py applies the rule.
# Usage (repository root): DATASETS=/path OUT=/folder [TIMEOUT=330] [PROCS=12] [DEVICE=cuda] \
#     research/ranking/known_classifier_job.sh [extra evaluate options, e.g. --epochs 1]
# shellcheck disable=SC2086
set -u
# one thread a process: the folds run side by side (BLAS's default of a thread per core each thrashes)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
cd "$(dirname "$0")/../.." || exit 1
data=${DATASETS:-../shared/datasets}
out=$(mkdir -p "${OUT:?OUT: where the packed results go}/known" && cd "$OUT" && pwd)
rows="${ROWS:-REDDIT-BINARY Tox21_p53 Tox21_HSE NCI1 AIDS PROTEINS_full ENZYMES IMDB-BINARY PROTEINS_full:first-label
      DHFR DHFR:first-label hERG BZR BZR:first-label}"
jobs=$(for item in $rows; do for k in 1 2 3 4 5; do echo "$item $k"; done; done)
run_one() {  # ROW K: one fold, its JSON and log in $out/known/
  item=$1; k=$2; name=${item%%:*}; rule=minority; suffix=""
  [[ $item == *:first-label ]] && { rule=first-label; suffix="__first-label"; }
  case $name in
    Tox21_*) args=("$data/${name}_training" --protocol split --test "$data/${name}_testing") ;;
    hERG) args=("$data/herg.tab" --anomaly 0) ;;
    *) args=("$data/$name" --anomaly "$rule") ;;
  esac
  stem="$out/known/${name}${suffix}__fold$k"
  [ -f "$stem.json" ] && return  # done in an earlier run
  python3 -m core evaluate "${args[@]}" --method consensus --known-anomalies 10 --only "$k" --threads 1 \
      --device "${DEVICE:-cuda}" --json "$stem.json" $EXTRA > "$stem.log" 2>&1 || echo "failed: $item fold $k" >&2
  echo "$(date -u +%T) done $item fold $k"
}
EXTRA="$*"
export -f run_one; export data out DEVICE EXTRA
start=$SECONDS
echo "$jobs" | timeout -k 10 "${TIMEOUT:-330}" xargs -P "${PROCS:-12}" -L 1 bash -c 'run_one "$0" "$1"' 
rc=$?
(cd "$out" && tar czf known_classifier.tar.gz known)
echo "known_classifier_job: $(ls "$out"/known/*.json 2>/dev/null | wc -l) fold files, exit $rc, $((SECONDS - start)) s"
