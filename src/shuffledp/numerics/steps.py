"""Step generators: computations that hand their inner evaluations to a runner, so that many
of them can run side by side with each round's evaluations done in one numpy batch.

A step generator yields ``(kind, arguments)``, receives the result of that piece of work,
and finally returns its value. ``runners`` maps each kind to a function taking a list of
arguments and returning the list of results — the same results as one at a time (the batch
functions keep every elementwise operation and every row's reduction of the one-at-a-time
code, so the floats do not depend on what else is in the batch). Used by the certified
i.i.d. sums (``pairs.iid.positive_parts``: tilts, node bands, remainder bisections).
"""

from __future__ import annotations

import numpy as np

__all__ = ["illinois_rows", "run_steps", "run_steps_many"]


def run_steps(gen, runners):
    """The value of one step generator, each piece of work done as it comes."""
    try:
        job = next(gen)
        while True:
            job = gen.send(runners[job[0]]([job[1]])[0])
    except StopIteration as stop:
        return stop.value


def run_steps_many(gens, runners, defer=()) -> list:
    """The values of many step generators, run side by side: the pieces of work they ask for
    at the same step are done in one call of their kind's runner. Pieces of a kind in
    ``defer`` wait until no other kind is pending, so that they come in as few calls as
    possible (the FFT sums, run on the thread pool: one call with every curve point's sum
    instead of a few at each round of the tilt searches). Each generator's own steps keep
    their order, so the values are the same."""
    out = [None] * len(gens)
    pending = {}
    for i, g in enumerate(gens):
        try:
            pending[i] = next(g)
        except StopIteration as stop:
            out[i] = stop.value
    while pending:
        # the pending pieces by kind, each kind's in the generators' pending order (one pass)
        by_kind: dict = {}
        for i, job in pending.items():
            got = by_kind.get(job[0])
            if got is None:
                if job[0] not in runners:
                    raise KeyError(f"no runner for the step kind {job[0]!r}")
                by_kind[job[0]] = [i]
            else:
                got.append(i)
        now = [k for k in runners if k in by_kind and k not in defer]
        if not now:
            now = [k for k in runners if k in by_kind]
        sent = {}
        for kind in now:
            idx = by_kind[kind]
            sent.update(zip(idx, runners[kind]([pending[i][1] for i in idx])))
        pending = {i: job for i, job in pending.items() if i not in sent}
        for i, r in sent.items():
            try:
                pending[i] = gens[i].send(r)
            except StopIteration as stop:
                out[i] = stop.value
    return out


def illinois_rows(f, a, b, fa, fb, *, xtol: float = 1e-14, rtol: float = 1e-13,
                  max_iter: int = 200):
    """``numerics.illinois_steps`` for many rows side by side, from brackets whose ends are
    already evaluated (``fa`` = f(a), ``fb`` = f(b)): each round evaluates every row still
    searching in one call ``f(rows, x)`` (their indices and trial points, arrays) and returns
    the roots (an array). Every row takes the steps its own scalar search takes — the same
    elementwise IEEE operations (regula falsi point, midpoint fallback, Illinois halving,
    stopping width), so the same x, bit for bit, when ``f`` gives each row the values the
    scalar function would. A NaN value raises ``SearchError`` as ``illinois_steps`` does."""
    from .search import SearchError
    a = np.array(a, dtype=float)
    b = np.array(b, dtype=float)
    fa = np.array(fa, dtype=float)
    fb = np.array(fb, dtype=float)
    if np.isnan(fa).any() or np.isnan(fb).any():
        raise SearchError("illinois_root: the function is NaN at an end of a bracket (a NaN "
                          "cannot be compared with the target; fix the function, not the "
                          "search)")
    x = np.full(a.shape, np.nan)
    lo_root = fa >= 0.0
    x[lo_root] = a[lo_root]
    hi_root = ~lo_root & (fb <= 0.0)
    x[hi_root] = b[hi_root]
    side = np.zeros(a.shape, dtype=np.int8)
    act = np.flatnonzero(~(lo_root | hi_root))
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(max_iter):
            if act.size == 0:
                return x
            aa, bb = a[act], b[act]
            stop = bb - aa <= np.maximum(xtol, rtol * np.maximum(np.abs(aa), np.abs(bb)))
            if stop.any():
                x[act[stop]] = 0.5 * (aa[stop] + bb[stop])
                act = act[~stop]
                if act.size == 0:
                    return x
                aa, bb = a[act], b[act]
            fa_, fb_ = fa[act], fb[act]
            xr = (aa * fb_ - bb * fa_) / (fb_ - fa_)
            mid = ~((aa < xr) & (xr < bb))
            xr[mid] = 0.5 * (aa[mid] + bb[mid])
            fx = np.asarray(f(act, xr), dtype=float)
            if np.isnan(fx).any():
                k = int(np.flatnonzero(np.isnan(fx))[0])
                raise SearchError(f"illinois_root: the function is NaN at x={float(xr[k])!r} "
                                  "(a NaN cannot be compared with the target; fix the "
                                  "function, not the search)")
            sd = side[act]
            up = fx > 0.0
            dn = fx < 0.0
            r = act[up]
            b[r], fb[r] = xr[up], fx[up]
            h = r[sd[up] == -1]
            fa[h] *= 0.5
            side[r] = -1
            r = act[dn]
            a[r], fa[r] = xr[dn], fx[dn]
            h = r[sd[dn] == 1]
            fb[h] *= 0.5
            side[r] = 1
            zero = ~(up | dn)
            x[act[zero]] = xr[zero]
            act = act[~zero]
    x[act] = 0.5 * (a[act] + b[act])
    return x
