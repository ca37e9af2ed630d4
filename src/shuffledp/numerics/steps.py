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

__all__ = ["run_steps", "run_steps_many"]


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
