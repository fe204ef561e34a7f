#!/usr/bin/env bash
# Run the paper's competing methods on every shared data set with the harness's protocols.
# Usage: DATASETS=/path/to/datasets benchmarks/evaluation/run_methods.sh METHOD [DATASET ...]
# (from the repository root; DATASETS is the folder holding the TU collections, the Tox21 files
# and herg.tab, by default ../shared/datasets).
# Writes docs/results/methods/<data set>__<method>[__first-label].json and a log in
# benchmarks/out/logs/methods/ (ignored by git);
# a data set whose JSON already says "complete": true is skipped, so the script can be rerun.
set -u
method=$1; shift
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}  # one thread, as --threads 1: runs beside other work
data=${DATASETS:-${SHARED_DATA:-../shared/datasets}}
all="AIDS BZR BZR:first-label DHFR DHFR:first-label ENZYMES hERG IMDB-BINARY PROTEINS_full
     PROTEINS_full:first-label NCI1 Tox21_HSE Tox21_p53 REDDIT-BINARY"
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
