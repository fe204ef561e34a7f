#!/usr/bin/env bash
# Measure a detector on the 14 rows of the competitor table with the harness, on the same folds
# and protocols as the competitors: benchmarks/evaluation/run_methods.sh does it, one row at a time,
# one thread, skipping rows whose JSON is complete.
# Usage (from the repository root): DATASETS=/path/to/datasets research/ranking/run_views.sh METHOD [ROW ...]
exec "$(dirname "$0")/../../benchmarks/evaluation/run_methods.sh" "$@"
