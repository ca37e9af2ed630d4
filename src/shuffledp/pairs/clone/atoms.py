r"""Finite atom sets (log P, log Q) of the clone pair for PLD composition.

``pair_pld_atoms``: a pair DOMINATING the clone pair (upper bounds); ``pair_floor_atoms``:
a pair DOMINATED by it (floors that decide skips); ``pair_lower_atoms``: a window of any
pair (g ≥ 0) for lower bounds; ``pair_log_atoms``: the truncated exact atoms.

``pair`` arguments are ``ClonePair`` instances (not imported here: the pair imports its
kernels).
"""

from __future__ import annotations

import math

import numpy as np

from ...core._memo import memo
from ...core._parallel import parallel, pmap, threads
from ...numerics import binom_logpmf, binom_window, half_binom_logpmf
from .hockey import _need_g0
from .rdp_points import (_SlicePoints, _rdp_plan, _rdp_points, _rdp_window, _slice_points,
                         _step_for, _window_core, _window_logpmf, _x_windows)
from .slices import _log_tails, _pair_slices

#: Atom budget of the dominating pair handed to PLD composition, and its window (sds).
PLD_MAX_ATOMS = 1_500_000
_PLD_SDS = 9.0
#: Below this many standard deviations the lower tail of C is carried by c = 0.
_LOW_SDS = 18.0


def pair_pld_atoms(pair, max_atoms: int | None = None):
    """A finite dominating pair for PLD composition: (log P atoms, log Q atoms, tail mass).

    Dominance (hockey-stick at every order, both directions, so it survives adaptive
    composition — Zhu, Dong, Wang, AISTATS 2022, Thm 10): the pair is a disjoint mixture
    over c of slice pairs (c is readable from the output), H is additive over the mixture,
    and every slice's H is non-increasing in c (both
    directions by the pair's symmetry). So slices may be replaced by a smaller c: the
    window's slices are kept every Δ-th c (Δ = 1 when within ``max_atoms``), each block
    carrying its mass at its first slice, the upper tail of C joins the last block, and
    the lower tail is carried by the c = 0 slice (two atoms). Within a slice x runs over
    ±(9 sd + 3); the P-mass outside (Hoeffding, ≤ 2e-17 per slice) is the returned tail,
    which the PLD route charges at infinite loss every round (the pair is symmetric, so the
    same bound serves Q). For g = 0 pairs only.
    """
    _need_g0(pair, "pair_pld_atoms")
    budget = int(max_atoms or PLD_MAX_ATOMS)
    c_eval, mass, log_below, alo, ahi, tails, _, _, _ = _pld_plan(pair, budget)
    tail = _window_tail(mass, tails) + 1e-300
    # Atoms after the window's: (size, maker) in order; a maker returns (log P, log Q) and
    # runs beside the window's groups (the slice lo2 alone has ~1.6e5 points at n = 1e9).
    extras = []
    if log_below > -math.inf:
        # The lower tail of C: its part in [lo2, lo) is carried by the slice lo2 (smaller c is
        # more informative, so that slice dominates it), only the rest by the victim alone
        # (c = 0, losses ±ε0). The window is 9 sd wide, so at c = 0 it would weigh ~1e-18:
        # atoms at ±ε0 that stretch the PLD's loss grid from the bulk (~±1e-4 at n = 1e9)
        # to ±ε0 (1.6 million points) and cannot be cut at small δ. Beyond 18 sd they weigh
        # < 1e-70: the grid's heavy-loss cut and low-loss floor then absorb them.
        m = pair.n - 1
        lo = int(_rdp_window(pair.n, pair.p, _PLD_SDS)[0][0])
        lo2 = binom_window(m, pair.p, _LOW_SDS, 3)[0]
        if 0 < lo2 < lo:
            cs = np.arange(lo2, lo, dtype=float)
            mid = float(np.sum(np.exp(_window_logpmf(cs, m, pair.p)))) * (1.0 + 1e-12)
            log_below = _log_tails(m, pair.p, lo2, m)[0]
            c2 = np.array([lo2], dtype=np.int64)
            a2, b2, lt2 = _x_windows(c2, _PLD_SDS)

            def slice_lo2(c2=c2, a2=a2, b2=b2, log_mid=math.log(mid)):
                _, lP2, ell2 = _rdp_points(pair, c2, a2, b2, 0, 1)
                lp2 = log_mid + lP2
                return lp2, lp2 - ell2

            extras.append((int(b2[0]) + 2 - int(a2[0]), slice_lo2))
            tail += 2.0 * mid * float(np.exp(lt2[0]))   # its x-tail, as for the others
        la, lb = pair.log_alpha, pair.log_beta
        lw = log_below
        if lw > -math.inf:
            extras.append((2, lambda lw=lw: (np.array([lw + la, lw + lb]),
                                             np.array([lw + lb, lw + la]))))
    # The window's atoms are written group by group into arrays that already have room for
    # the lower tail's (no full-size temporaries; the same values and order as
    # log(mass[j]) + log P(x | c) and that minus ℓ, followed by the lower tail's atoms).
    # Groups are independent: a few threads share them (numpy's logaddexp, most of the
    # cost, releases Python's lock), each writing its own slices; the lower tail's atoms
    # go with the last share.
    pts = _SlicePoints(pair, c_eval, alo, ahi, 0, c_eval.size)
    n_main = pts.total
    n_all = n_main + sum(size for size, _ in extras)
    logp = np.empty(n_all)
    logq = np.empty(n_all)
    with np.errstate(divide="ignore"):
        log_mass = np.log(mass)

    def fill(job):
        part, tail_atoms = job
        for g0, g1, s0, s1 in part:
            logP, ell = pts.group(g0, g1)
            lp = logp[s0:s1]
            np.add(np.repeat(log_mass[g0:g1], pts.counts[g0:g1]), logP, out=lp)
            np.subtract(lp, ell, out=logq[s0:s1])
        if tail_atoms:
            pos = n_main
            for size, make in extras:
                ep, eq = make()
                if ep.size != size:                    # (cannot happen: sized above)
                    raise ArithmeticError("a lower-tail slice has an unexpected size")
                logp[pos:pos + size] = ep
                logq[pos:pos + size] = eq
                pos += size

    k = threads() if parallel() and len(pts.groups) >= 8 else 1
    pmap(fill, [(pts.groups[i::k], i == k - 1) for i in range(k)])
    keep = np.isfinite(logp)
    if keep.all():
        return logp, logq, tail
    return logp[keep], logq[keep], tail


#: Window (standard deviations of C and of A in each slice) and atom budget of the floor
#: pair (``pair_floor_atoms``): it decides skips only, so it is sized for speed.
_FLOOR_SDS = 7.0
FLOOR_MAX_ATOMS = 200_000


def pair_floor_atoms(pair, max_atoms: int | None = None):
    """Atoms (log P, log Q) of a pair DOMINATED by the clone pair: every hockey-stick curve
    and T-fold composition of it is at or below the clone pair's (for floors: a bound whose
    pair's T-fold ε is provably above the best answer so far need not be evaluated).

    The mirror image of ``pair_pld_atoms``: the window's slices are grouped in blocks of Δ
    consecutive c, and each block carries its mass at its *last* slice c'. Slice c' is a
    post-processing of slice c ≤ c' (add c' − c fair-coin clones to x), so the blocked
    mixture is a post-processing of the clone pair (the post-processor reads c, moves it to
    c' = the end of its block and adds the coins). Everything outside the window (the tails
    of C, x beyond ±7 sd in a slice) is left out, which only lowers every composed δ. The
    floating-point error of the masses (~1e-12 relative) is covered by scaling every atom
    down by 1e-9 (both P and Q: each term (P − e^ε Q)_+ then shrinks), and that of the
    losses by lowering them by a margin in the floor lattice (``pld_fft.floor_lattice``).
    For g = 0 pairs only.
    """
    _need_g0(pair, "pair_floor_atoms")
    budget = int(max_atoms or FLOOR_MAX_ATOMS)
    cs, _, logw = _window_core(pair.n, pair.p, _FLOOR_SDS)     # (no tails needed)
    step = _step_for(cs, _FLOOR_SDS, budget)
    starts = np.arange(0, cs.size, step)
    ends = np.append(starts[1:], cs.size) - 1
    log_mass = np.logaddexp.reduceat(logw, starts) if step > 1 else logw.copy()
    c_eval = cs[ends]
    alo, ahi, _ = _x_windows(c_eval, _FLOOR_SDS)
    jj, logP, ell = _rdp_points(pair, c_eval, alo, ahi, 0, c_eval.size)
    logp = log_mass[jj] + logP + math.log1p(-1e-9)
    logq = logp - ell
    keep = np.isfinite(logp) & np.isfinite(logq)
    return logp[keep], logq[keep]


def pair_lower_atoms(pair, sds: float = 9.0, max_atoms: int = 3_000_000):
    """Atoms (log P, log Q) of any pair (g ≥ 0) on a window, for LOWER-bound composition.

    Slices in ±(12 sd(C) + 12), x in ±(sds·sd + 3) of each; everything outside is simply
    left out, which only lowers every composed δ (the right direction for a lower bound,
    e.g. the k-RR marginal pair). Raises ``ValueError`` past
    ``max_atoms``.
    """
    sl = _pair_slices(pair)
    c = sl.c.astype(np.int64)
    keep = sl.w > 0
    c, W, al, be = c[keep], sl.w[keep], sl.alpha[keep], sl.beta[keep]
    half = np.floor(0.5 * sds * np.sqrt(np.maximum(c, 1.0))) + 3
    alo = np.maximum(0, np.floor(0.5 * c) - half).astype(np.int64)
    ahi = np.minimum(c, np.ceil(0.5 * c) + half).astype(np.int64)
    counts = ahi + 2 - alo                       # x from alo to ahi + 1
    total = int(counts.sum())
    if total > max_atoms:
        raise ValueError(f"the pair would have {total} atoms on its window, more than "
                         f"max_atoms={max_atoms}")
    jj = np.repeat(np.arange(c.size), counts)
    offs = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    x = (alo[jj] + offs).astype(float)
    cf = c[jj].astype(float)
    lv = half_binom_logpmf(x, cf)                # log Bin(c,½)(x); −inf at x = c + 1
    lu = half_binom_logpmf(x - 1.0, cf)          # log Bin(c,½)(x − 1)
    la, lb = np.log(al)[jj], np.log(be)[jj]
    lw = np.log(W)[jj]
    logp = lw + np.logaddexp(la + lu, lb + lv)
    logq = lw + np.logaddexp(lb + lu, la + lv)
    ok = np.isfinite(logp) | np.isfinite(logq)
    logp, logq = logp[ok], logq[ok]
    if pair.g > 0.0:
        # The s = 0 outcome (uninformative victim, no clones) has loss 0 but real mass; in a
        # composition it carries the other rounds' losses, so it must not be dropped.
        l0 = math.log(pair.g) + float(binom_logpmf(0, pair.n - 1, pair.p, 1.0 - pair.p))
        logp, logq = np.append(logp, l0), np.append(logq, l0)
    return logp, logq


def pair_log_atoms(pair, sds: float = 12.0, max_atoms: int = 20_000_000):
    """Atoms (log P, log Q) of the pair on a window, for PLD composition by other modules.

    The support points are (c, x): c clones in ±(sds·sd(C) + 3) and x in ±(sds·sd(A) + 3)
    within each slice (plus one for the victim). **Truncated**: the P-mass (and, by the
    symmetry of the pair, the Q-mass) missing from the atoms is 1 − Σ exp(logp); a
    pessimistic PLD must put it at privacy loss +∞. For g = 0 pairs only.
    """
    _need_g0(pair, "pair_log_atoms")
    m = pair.n - 1
    lo, hi = binom_window(m, pair.p, sds, 3)
    est = sum(min(c + 2, sds * math.sqrt(max(c, 1)) + 8) for c in range(lo, hi + 1))
    if est > max_atoms:
        raise ValueError(f"the pair would have about {est:.3g} atoms, more than max_atoms="
                         f"{max_atoms}; lower sds or raise max_atoms")
    c_eval, mass, _, jj, logP, ell, tails, _ = _slice_points(pair, sds, step=1)
    logp = np.log(mass[jj]) + logP
    # The last block absorbed the upper tail mass of C; take it back out for exact atoms.
    logw = binom_logpmf(c_eval, m, pair.p, 1.0 - pair.p)
    logp = logw[jj] + logP
    logq = logp - ell
    return logp, logq


def pair_pld_tail_floor(pair, max_atoms: int | None = None) -> float:
    """A lower bound on the tail mass ``pair_pld_atoms(pair, max_atoms)`` returns: its
    first term (the x-tails of the window's slices, 2·Σ mass·tail, the same plan and the
    same floating-point operations), without the atoms (milliseconds instead of 0.1-0.3 s).
    The PLD composer's floor uses it: when this mass charged every round already exceeds δ
    over T rounds, the route's answer is ∞ and its atoms need not be built."""
    _need_g0(pair, "pair_pld_tail_floor")
    budget = int(max_atoms or PLD_MAX_ATOMS)
    _, mass, _, _, _, tails, _, _, _ = _pld_plan(pair, budget)
    return _window_tail(mass, tails)


@memo(maxsize=2)
def _pld_plan(pair, budget: int):
    """``_rdp_plan`` of the PLD atoms' window, kept for the atoms: the PLD composer's floor
    asks ``pair_pld_tail_floor`` just before the route builds the atoms from the same plan
    (at n = 1e9 its slice window holds 2.7e5 slices). Read-only arrays; no log masses
    (neither reads them)."""
    plan = _rdp_plan(pair, _PLD_SDS, None, budget, want_log_mass=False)
    for a in plan:
        if isinstance(a, np.ndarray):
            a.setflags(write=False)
    return plan


def _window_tail(mass, tails) -> float:
    """The P-mass of the slices' x outside their windows, both sides (``pair_pld_atoms``'s
    tail, first term)."""
    return float(np.dot(mass, tails)) * 2.0
