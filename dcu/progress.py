"""Progress lines on stderr for long runs: phases (building, elaborating) with their time, and
a count (instructions, cycles) with its rate and the time left before the run's limit.

On a terminal the count is a tqdm bar redrawn in place; in a log (stderr not a terminal) the
same text is written as a line of its own every ``LOG_INTERVAL`` seconds, so a CI log shows
how far a run got. ``Progress(enabled=False)`` (``dcu run --quiet``) prints nothing.
"""
from __future__ import annotations

import sys
import time

__all__ = ["Progress", "as_progress"]

TTY_INTERVAL = 0.5     # seconds between redraws on a terminal
LOG_INTERVAL = 5.0     # seconds between lines in a log
DELAY = 2.0            # a count shows only once it has run this long: short runs print nothing


class _Lines:
    """A file for tqdm that turns its in-place redraws into whole lines (for logs)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> None:
        text = text.replace("\r", "").strip()
        if text:
            self.stream.write(text + "\n")

    def flush(self) -> None:
        self.stream.flush()


class Progress:
    """Phases and counts of one run, reported on ``stream`` (default stderr).

    Parameters
    ----------
    enabled : bool
        False: every method does nothing.
    stream : file, optional
    """

    def __init__(self, enabled: bool = True, stream=None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._phase: tuple[str, float, bool] | None = None
        self._bar = None

    def __bool__(self) -> bool:
        return self.enabled

    # ---- phases ---------------------------------------------------------------------------
    def phase(self, text: str, slow: bool = True) -> None:
        """Start a phase (``elaborating the DCU``); the previous one ends, with its time. A
        phase that may be quick (``slow=False``) is reported only if it took ``DELAY`` or more."""
        self.end_phase()
        if self.enabled:
            if slow:
                print(f"dcu: {text} ...", file=self.stream, flush=True)
            self._phase = (text, time.perf_counter(), slow)

    def end_phase(self) -> None:
        if self._phase is not None:
            text, t0, slow = self._phase
            took = time.perf_counter() - t0
            if slow or took >= DELAY:
                print(f"dcu: {text}: {took:.1f} s", file=self.stream, flush=True)
            self._phase = None

    # ---- counts ---------------------------------------------------------------------------
    def count(self, desc: str, unit: str, total: int | None) -> None:
        """Start counting ``unit`` against ``total`` (the limit: the ETA is the time to reach it)."""
        self.end_phase()
        self.close()
        if not self.enabled:
            return
        from tqdm import tqdm
        self._bar = tqdm(total=total, desc=desc, unit=f" {unit}", unit_scale=True, dynamic_ncols=self.tty,
                         ncols=None if self.tty else 110, ascii=not self.tty, leave=True,
                         mininterval=TTY_INTERVAL if self.tty else LOG_INTERVAL, delay=DELAY,
                         file=self.stream if self.tty else _Lines(self.stream))

    def update(self, n: int, note: str | None = None) -> None:
        """The count is now ``n``; ``note`` is shown after it."""
        bar = self._bar
        if bar is None:
            return
        if note is not None and note != getattr(self, "_note", None):
            self._note = note
            bar.set_postfix_str(note, refresh=False)
        bar.update(n - bar.n)

    def close(self) -> None:
        """End the count (its last line stays) and any phase."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self.end_phase()

    # ---- the model ------------------------------------------------------------------------
    def model_callback(self, wave_limit: int | None):
        """A ``sim.model.Model`` progress callback: instructions against the workgroups done,
        and the running wave's instructions against ``wave_limit``."""
        self.count("model", "instr", None)
        t0 = time.perf_counter()
        last = [0.0]

        def report(stats, wg_index: int, wg_count: int, wave) -> None:
            now = time.perf_counter()
            if now - last[0] < TTY_INTERVAL:
                return
            last[0] = now
            rate = stats.instructions / max(now - t0, 1e-9)
            note = f"workgroup {wg_index + 1}/{wg_count}"
            if wave_limit:
                left = (wave_limit - wave.instructions) / max(rate, 1e-9)
                note += f", wave {wave.id}: {wave.instructions:,}/{wave_limit:,} (limit in {left:.0f} s at most)"
            self.update(stats.instructions, note)
        return report


def as_progress(progress) -> Progress:
    """A :class:`Progress` from a backend's ``progress`` option: one already, a bool, or None
    (on when stderr is a terminal)."""
    if isinstance(progress, Progress):
        return progress
    return Progress(sys.stderr.isatty() if progress is None else bool(progress))
