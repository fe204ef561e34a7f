#!/usr/bin/env bash
# Run dump.py over the 14 rows, cheapest first, one process at a time, niced, one thread.
# Usage (from the worktree root): nohup research/consensus/run_all.sh > research/consensus/dumps/run_all.log 2>&1 &
# Pass 1: size, wl-lesinn, pk-lesinn, glocalkd on every row; pass 2: OCGCN (optional component).
set -u
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD OMP_NUM_THREADS=1
cheap="hERG BZR BZR:first-label DHFR DHFR:first-label ENZYMES IMDB-BINARY PROTEINS_full PROTEINS_full:first-label AIDS"
big="NCI1 Tox21_HSE Tox21_p53 REDDIT-BINARY"
stop=${STOP_AT:-01:40}
for pass in base ocgcn; do
  for row in $cheap $big; do
    now=$(date -u +%H:%M); if [[ "$now" > "$stop" && "$now" < "12:00" ]]; then echo "$now: past $stop, not starting $row"; exit 0; fi
    echo "$(date -u +%H:%M:%S) pass $pass row $row"
    if [[ $pass == base ]]; then
      nice -n 10 python -m research.consensus.dump "$row" || echo "FAILED $row"
    else
      nice -n 10 python -m research.consensus.dump "$row" --components ocgcn || echo "FAILED $row ocgcn"
    fi
  done
done
