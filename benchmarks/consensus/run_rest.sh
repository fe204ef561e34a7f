#!/usr/bin/env bash
# The second queue (after run_all.sh's cheap rows): timing, the large rows fold by fold, each
# fold started only before its latest start time (UTC HH:MM), then OCGCN where time allows.
# Usage (worktree root): nohup benchmarks/consensus/run_rest.sh > benchmarks/consensus/dumps/run_rest.log 2>&1 &
set -u
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD OMP_NUM_THREADS=1
whole() {  # ROW LATEST_START [extra args]: every fold in one process (one data load)
  local row=$1 latest=$2; shift 2
  now=$(date -u +%H:%M)
  if [[ "$now" > "$latest" && "$now" < "12:00" ]]; then echo "$now: past $latest, not starting $row $*"; return; fi
  echo "$(date -u +%H:%M:%S) $row all folds $*"
  nice -n 10 python benchmarks/consensus/dump.py "$row" "$@" || echo "FAILED $row $*"
}
[[ -n "${WAIT_PID:-}" ]] && while kill -0 "$WAIT_PID" 2>/dev/null; do sleep 5; done
run() {  # ROW FOLDS LATEST_START [extra args]
  local row=$1 folds=$2 latest=$3; shift 3
  for k in ${folds//,/ }; do
    now=$(date -u +%H:%M)
    if [[ "$now" > "$latest" && "$now" < "12:00" ]]; then echo "$now: past $latest, not starting $row fold $k $*"; continue; fi
    echo "$(date -u +%H:%M:%S) $row fold $k $*"
    nice -n 10 python benchmarks/consensus/dump.py "$row" --only "$k" "$@" || echo "FAILED $row fold $k $*"
  done
}
cheap="hERG BZR BZR:first-label DHFR DHFR:first-label ENZYMES IMDB-BINARY PROTEINS_full PROTEINS_full:first-label AIDS"
for row in $cheap; do whole "$row" 01:35; done   # finishes anything run_all.sh left
echo "$(date -u +%H:%M:%S) timing"
nice -n 10 python benchmarks/consensus/timing.py AIDS --json benchmarks/consensus/timing_AIDS.json
run NCI1 1,2,3,4,5 01:30
run Tox21_HSE 1,2,3 01:25
run Tox21_p53 1,2,3 01:25
run REDDIT-BINARY 1,2,3,4,5 01:20
run Tox21_HSE 4,5 01:25
run Tox21_p53 4,5 01:25
for row in $cheap; do whole "$row" 01:30 --components ocgcn; done
