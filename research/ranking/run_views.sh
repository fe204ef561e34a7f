#!/usr/bin/env bash
# Measure detectors on the 14 rows of the competitor table with the harness, on the same folds
# and protocols as benchmarks/evaluation/run_methods.sh, one row at a time, one thread.
# Usage (from the repository root): DATASETS=/path/to/datasets research/ranking/run_views.sh METHOD [ROW ...]
# Writes docs/results/methods/<data set>__<method>[__first-label].json (a JSON that already says
# "complete": true is skipped) and a log in benchmarks/out/logs/methods/ (ignored by git).
set -u
method=$1; shift
data=${DATASETS:-../shared/datasets}
all="AIDS BZR BZR:first-label DHFR DHFR:first-label ENZYMES hERG IMDB-BINARY PROTEINS_full
     PROTEINS_full:first-label NCI1 Tox21_HSE Tox21_p53 REDDIT-BINARY"
export OMP_NUM_THREADS=1
for item in ${@:-$all}; do
  name=${item%%:*}; rule=minority; suffix=""
  [[ $item == *:first-label ]] && { rule=first-label; suffix="__first-label"; }
  out=docs/results/methods/${name}__${method}${suffix}.json
  log=benchmarks/out/logs/methods/${name}__${method}${suffix}.log
  mkdir -p "$(dirname "$log")"
  if [[ -f $out ]] && grep -q '"complete": true' "$out"; then continue; fi
  case $name in
    Tox21_*) args=("$data/${name}_training" --protocol split --test "$data/${name}_testing") ;;
    hERG) args=("$data/herg.tab" --anomaly 0) ;;
    *) args=("$data/$name" --anomaly "$rule") ;;
  esac
  echo "$(date -u +%H:%M:%S) $name ($rule) $method" >&2
  python -m core evaluate "${args[@]}" --method "$method" --threads 1 --json "$out" --resume >> "$log" 2>&1 \
    || echo "  failed: see $log" >&2
done
