"""The consensus-detector study: per-fold component scores, candidate combinations and their tables."""
