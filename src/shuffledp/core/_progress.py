"""Progress bars for long jobs (reports, figures, sweeps, calibration) through ``tqdm``.

Drawn on stderr only when it is a terminal (and never under ``--json``: callers pass
``enabled=False``); silent without the optional ``tqdm`` (the ``progress`` extra). ``tqdm``
is imported only when a bar is drawn, so ``import shuffledp`` does not pay for it.
"""

from __future__ import annotations

import sys


def _tqdm():
    try:
        from tqdm.auto import tqdm
    except ImportError:            # optional dependency: no bar, same results
        return None
    return tqdm


class Progress:
    """``with Progress(total, desc) as bar: ... bar.update(1, note)`` (total may be None)."""

    def __init__(self, total: int | None, desc: str = "", stream=None, enabled: bool | None = None):
        self.total = None if total is None else max(int(total), 1)
        self.desc = desc
        self.done = 0
        self.stream = stream or sys.stderr
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.enabled = bool(isatty()) if enabled is None else bool(enabled)
        self._bar = None
        if self.enabled:
            tqdm = _tqdm()
            if tqdm is not None:
                self._bar = tqdm(total=self.total, desc=desc, file=self.stream, leave=False,
                                 dynamic_ncols=True, mininterval=0.2)

    def update(self, k: int = 1, note: str = ""):
        self.done += k
        if self._bar is not None:
            if note:
                self._bar.set_postfix_str(note[:40], refresh=False)
            self._bar.update(k)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
