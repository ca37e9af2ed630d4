"""BLAS single-threaded while a question is answered.

The kernels' matrix-vector products are small (a few thousand rows); OpenBLAS splits them
over threads, and on a busy machine the hand-off costs far more than the product (measured:
12 ms instead of 0.7 ms for 8400 × 64 at load 4, the trimmed-clone question 6.0 s instead of
3.4 s). The values do not depend on the thread count (each output is one thread's dot
product; the 164 answers of the latency check are bit-identical either way), so the loop
limits BLAS to one thread for the duration of a question and restores the caller's
setting after it, through threadpoolctl (a small pure-Python package; without it nothing
changes but the speed). ``SHUFFLEDP_BLAS=keep`` leaves BLAS alone.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["single_threaded_blas"]

_controller = None
_off = False


@contextlib.contextmanager
def single_threaded_blas():
    global _controller, _off
    if _off or os.environ.get("SHUFFLEDP_BLAS", "") == "keep":
        yield
        return
    if _controller is None:
        try:
            import threadpoolctl
        except ImportError:
            _off = True
            yield
            return
        _controller = threadpoolctl.ThreadpoolController()
    with _controller.limit(limits=1, user_api="blas"):
        yield
