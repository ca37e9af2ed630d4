"""A dependency-free progress bar on stderr (only drawn when stderr is a terminal)."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, desc: str = "", stream=None, enabled: bool | None = None):
        self.total = max(int(total), 1)
        self.desc = desc
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.t0 = time.perf_counter()

    def update(self, k: int = 1, note: str = ""):
        self.done += k
        if self.enabled:
            frac = min(self.done / self.total, 1.0)
            bar = "#" * int(30 * frac)
            el = time.perf_counter() - self.t0
            self.stream.write(f"\r{self.desc} [{bar:<30}] {self.done}/{self.total} {el:5.1f}s {note[:30]:<30}")
            self.stream.flush()

    def close(self):
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
