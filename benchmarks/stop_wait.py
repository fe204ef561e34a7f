"""Stop: seconds from a person's Stop to a usable model, as the app's training stops a consensus.

    python -m benchmarks.stop_wait DATA [--graphs N] [--repeats R]

Fits the default consensus on the first N graphs of DATA (a file or TU folder); Stop is asked as
GLocalKD's first epoch ends, and the benchmark times the wait from there to ``fit`` returning a
model (the other views fitted, every view's calibration and fit-graph scores). Prints one JSON line
with each repeat's wait and the first epoch's seconds.
"""
from __future__ import annotations

import argparse
import json
import time


def stopped_fit(graphs, make_detector) -> tuple[float, float, object]:
    """(seconds from Stop to the model, seconds to Stop, the model) of one consensus fit."""
    asked: list[float] = []
    start = time.perf_counter()

    def on_epoch(info) -> None:
        if not asked:
            asked.append(time.perf_counter())

    model = make_detector("consensus", device="cpu")
    model.fit(graphs, on_epoch=on_epoch, should_stop=lambda: bool(asked))
    return round(time.perf_counter() - asked[0], 2), round(asked[0] - start, 2), model


def main() -> None:
    from core import load, make_detector

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data")
    p.add_argument("--graphs", type=int, default=6000)
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args()
    graphs = load(args.data)
    graphs = graphs.subset(range(min(args.graphs, len(graphs))))
    waits, epochs = [], []
    for _ in range(args.repeats):
        wait, epoch, model = stopped_fit(graphs, make_detector)
        waits.append(wait)
        epochs.append(epoch)
    print(json.dumps({"data": args.data, "graphs": len(graphs), "stop_wait_s": waits, "first_epoch_s": epochs,
                      "stopped_early": bool(model.stopped_early_)}))


if __name__ == "__main__":
    main()
