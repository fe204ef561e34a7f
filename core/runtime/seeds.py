"""The seeds every random generator here takes, in one place that loads nothing heavy (the app's
settings form reads it before torch has loaded)."""

SEED_MAX = 2**32 - 1  # numpy's and torch's seeds: whole numbers from 0 to this (numpy refuses negative ones, torch larger)
