#!/usr/bin/env bash
# Third queue (the machine was loaded 3-7 by other jobs, so the large rows got fewer folds):
# interleave the large rows so that each has at least one fold / seed before any gets more.
# Usage (worktree root): WAIT_PID=... nohup benchmarks/consensus/run_final.sh > benchmarks/consensus/dumps/run_final.log 2>&1 &
set -u
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD OMP_NUM_THREADS=1
[[ -n "${WAIT_PID:-}" ]] && while kill -0 "$WAIT_PID" 2>/dev/null; do sleep 5; done
one() {  # ROW FOLD LATEST_START [extra args]
  local row=$1 k=$2 latest=$3; shift 3
  now=$(date -u +%H:%M)
  if [[ "$now" > "$latest" && "$now" < "12:00" ]]; then echo "$now: past $latest, not starting $row fold $k $*"; return; fi
  echo "$(date -u +%H:%M:%S) $row fold $k $*"
  nice -n 10 python benchmarks/consensus/dump.py "$row" --only "$k" "$@" || echo "FAILED $row fold $k $*"
}
echo "$(date -u +%H:%M:%S) timing hERG"
nice -n 10 python benchmarks/consensus/timing.py hERG --json benchmarks/consensus/timing_hERG.json
for k in 1 2 3 4 5; do
  one NCI1 $k 01:25
  one Tox21_HSE $k 01:25
  one Tox21_p53 $k 01:25
  one REDDIT-BINARY $k 01:20
done
