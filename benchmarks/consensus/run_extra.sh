#!/usr/bin/env bash
# Fourth queue: the load fell to ~2 at 01:25, so a few more folds before the 01:40 stop.
# Usage (worktree root): WAIT_PID=... nohup benchmarks/consensus/run_extra.sh > benchmarks/consensus/dumps/run_extra.log 2>&1 &
set -u
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD OMP_NUM_THREADS=1
[[ -n "${WAIT_PID:-}" ]] && while kill -0 "$WAIT_PID" 2>/dev/null; do sleep 5; done
one() {  # ROW FOLD LATEST_START
  local row=$1 k=$2 latest=$3
  now=$(date -u +%H:%M)
  if [[ "$now" > "$latest" && "$now" < "12:00" ]]; then echo "$now: past $latest, not starting $row fold $k"; return; fi
  echo "$(date -u +%H:%M:%S) $row fold $k"
  nice -n 10 python benchmarks/consensus/dump.py "$row" --only "$k" || echo "FAILED $row fold $k"
}
one NCI1 4 01:35
one NCI1 5 01:35
one Tox21_p53 3 01:34
