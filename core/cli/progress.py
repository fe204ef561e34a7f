"""Progress of a long command on stderr: a bar on a terminal, plain lines in a log.

When stderr is not a terminal (a run logged to a file, a batch job) a bar would write
nothing readable; instead a line is printed every 10 s, so a log shows the run is alive."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable


class Progress:
    """``update(read, scored)`` after each chunk; ``close()`` at the end. ``total`` if known."""

    def __init__(self, unit: str = "mol", total: int | None = None, every: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = sys.stderr
        self.unit, self.total, self.every, self.clock = unit, total, every, clock
        self.start = self.last = clock()
        self.bar = None
        if self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit=unit, file=self.stream)

    def update(self, read: int, scored: int | None = None) -> None:
        """Show the progress: move the bar, or print a line when ``every`` seconds have passed.

        Args:
            read: rows read so far.
            scored: rows scored so far (None: not shown).
        """
        if self.bar is not None:
            self.bar.update(read - self.bar.n)
            return
        now = self.clock()
        if now - self.last >= self.every:
            self.last = now
            rate = read / (now - self.start) if now > self.start else 0.0
            of = f" of {self.total:,}" if self.total else ""
            done = f", {scored:,} scored" if scored is not None else ""
            print(f"glocalkd: {read:,}{of} {self.unit} read{done} ({rate:,.0f}/s)", file=self.stream, flush=True)

    def close(self) -> None:
        """Close the bar (a log gets no closing line)."""
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
