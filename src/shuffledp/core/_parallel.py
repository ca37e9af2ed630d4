"""Independent numeric jobs on a few threads (numpy's FFTs and large array operations
release the GIL, so the certified sums of a curve's points run side by side).

The thread count is ``SHUFFLEDP_THREADS`` from the environment when set (1 turns this off),
else the number of CPUs this process may use, at most ``MAX_THREADS``. Results never
depend on it: every job is a pure function of its input and comes back in input order.
A job that itself calls ``pmap`` runs that inner map serially (no nested pools, no
deadlock); a process forked from one that used the pool makes its own.
"""

from __future__ import annotations

import os
import threading

__all__ = ["threads", "parallel", "pmap", "MAX_THREADS"]

MAX_THREADS = 4

_pool = None
_pool_pid = None
_pool_lock = threading.Lock()
_local = threading.local()


def threads() -> int:
    """Worker threads ``pmap`` uses (≥ 1)."""
    env = os.environ.get("SHUFFLEDP_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"SHUFFLEDP_THREADS must be a positive integer; got {env!r}") from None
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(MAX_THREADS, n))


def _executor(k: int):
    global _pool, _pool_pid
    with _pool_lock:
        # A process forked after the pool was made (multiprocessing's "fork" start method)
        # inherits the pool object but not its threads: make a new one there.
        if _pool is None or _pool._max_workers != k or _pool_pid != os.getpid():
            from concurrent.futures import ThreadPoolExecutor   # lazy: import time
            if _pool is not None and _pool_pid == os.getpid():
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=k, thread_name_prefix="shuffledp",
                                       initializer=_mark_worker)
            _pool_pid = os.getpid()
        return _pool


def _mark_worker():
    _local.worker = True


def parallel() -> bool:
    """True when ``pmap`` would run its jobs side by side here (more than one thread, and
    not already inside one of its jobs)."""
    return threads() > 1 and not getattr(_local, "worker", False)


def pmap(fn, items) -> list:
    """``[fn(x) for x in items]``, on ``threads()`` threads when there is more than one job.

    The calling thread is one of them: it runs the first job while ``threads() − 1`` pool
    workers take the others in order, then takes back, from the end, each job no worker has
    started yet (a queue is first in, first out, so once one has started all before it
    have). A two-job map thus hands one job over instead of two, and never waits for a
    worker that has not been given a core."""
    items = list(items)
    if len(items) < 2 or not parallel():
        return [fn(x) for x in items]
    ex = _executor(max(1, threads() - 1))
    futs = [ex.submit(fn, x) for x in items[1:]]
    out = [None] * len(items)
    out[0] = _as_worker(fn, items[0])
    for i in range(len(futs) - 1, -1, -1):
        if not futs[i].cancel():
            break
        out[i + 1] = _as_worker(fn, items[i + 1])
    for i, f in enumerate(futs):
        if not f.cancelled():
            out[i + 1] = f.result()
    return out


def _as_worker(fn, x):
    """``fn(x)`` on the calling thread as if on a worker (a ``pmap`` inside runs serially)."""
    was = getattr(_local, "worker", False)
    _local.worker = True
    try:
        return fn(x)
    finally:
        _local.worker = was
