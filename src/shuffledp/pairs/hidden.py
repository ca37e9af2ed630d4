r"""The hidden-⊥ clone pair of a sampled round, by dominating cells.

Setting: each round only some users take part — ``CheckIn(γ)`` (each independently with
probability γ) or ``WithoutReplacement(m)`` (a uniform m-subset) — and the server sees the
shuffled reports of the participants and their number, not who took part. Neighbouring
datasets differ in one user's value (replacement, same n).

The pair (derived in docs/bounds.md, "Sampled rounds"). Start from a clone decomposition
of the randomizer (Feldman, McMillan, Talwar, arXiv:2012.12803, Lemma 3.3; arXiv:2208.04591v3
Thm 3.1 for class S(ε0); the randomizer-specific p_R): every other participant is a 0-clone
or a 1-clone with probability p/2 each and otherwise left out; the victim is type 0 w.p. α,
type 1 w.p. 1 − α under X0 (swapped under X1). A user who does not take part emits ⊥, a
value common to everyone, and the released multiset drops the ⊥s (post-processing), so the
victim's ⊥ is hidden among the others'. Releasing the counts (n_⊥, a, b) over all n users
is then a dominating pair:

    P(n_⊥, a, b) ∝ M(n_⊥, a, b) · [n_⊥ κ/2 + α a + (1 − α) b],   Q: α ↔ 1 − α,

M the multinomial law of the roles (⊥ : 1 − γ, clone : γp/2 each, left out : γ(1 − p)).
For (ε0, δ0)-LDP randomizers (the Gaussian) the victim is trimmed first (c = 1 − nδ0,
α from ε0 − log c, p = e^−ε0·c, κ = e^−ε0, total mass c_γ = 1 − γnδ0 charged per round);
for pure ε0-LDP κ = p and c_γ = 1. Without replacement n_⊥ = n − m is fixed and
s = a + b ~ Bin(m, p) over the participants.

Given the cell (n_⊥, s = a + b) the pair is *exactly* a one-dimensional clone slice:
a ~ Bin(s, ½) tilted by 1 ± (2α_eff − 1)(2a − s)/s, i.e. the slice c = s − 1 of
the clone pair (``pairs.clone``) with victim bias

    α_eff = ½ + (α − ½) · s / (s + κ n_⊥),

and the cell has the same weight w = M(n_⊥, s)(κ n_⊥ + s)/(κ n c_γ) under P and Q (so
revealing the cell is allowed). Every slice's divergences are non-increasing in c and
non-decreasing in α (a smaller-α victim is a garbling of a larger-α one), and α_eff falls
with n_⊥. So a group of cells s ∈ [s1, s2], n_⊥ ≥ e is dominated by the single slice
(c = s1 − 1, α_eff(s2, e)) carrying their total weight ("dominating cells"). Masses of n_⊥
below an edge are taken from upper bounds on the conditional CDF (stochastic domination:
more mass moved to more informative cells); everything outside the window is charged at
the most informative slice of all (c = 0, α). The result is a finite dominating pair, for
every order and both directions (the pair is symmetric under swapping a and b), so it
serves δ(ε), RDP and PLD composition alike.

Small n (tests, n ≤ ``EXACT_N``): every (n_⊥, s) is its own cell — the exact law.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass

import numpy as np

from ..core import _validate as v
from ..core._memo import register
from ..core._lazy import special  # scipy.special on first use (import time)
from ..numerics import (BDTR_MAX_N, accumulate_rows, binom_cdf_bounds, binom_cdf_bounds_many,
                        binom_logpmf, binom_logpmf_pairs, binom_tail_mass, binom_window,
                        falling_log_root, half_binom_logpmf, half_binom_logpmf_runs,
                        round_up)
from ..numerics import binomial as _binomial
from ..core._parallel import parallel, pmap
from .clone import conditional_hockey
from .clone.hockey import ThresholdMemo, slice0_hockey
from .law import Bias, CloneLaw

__all__ = ["mixture_rdp", "HiddenPair", "hidden_pair", "hidden_delta", "hidden_epsilon", "hidden_rdp", "hidden_atoms",
           "hidden_pld_atoms", "hidden_cells", "hidden_rdp_floor", "EXACT_N"]

#: Check-in protocols with n up to this are enumerated cell by cell (the exact law).
EXACT_N = 300
#: ``ranking`` mode of ``hidden_cells`` / ``hidden_atoms`` for the ε0 search over several
#: rounds: the ranking cells, with the smooth sums over the window's rows read on a lattice
#: where that is exact to double precision (``_checkin_sampled_rows``).
SAMPLED = "sampled"
#: s window (standard deviations, extra) and the n_⊥ bin edges below the conditional mean.
_S_SDS, _S_EXTRA = 12.0, 12
_NBOT_Z = (-12.0, -4.0, -2.5, -1.5, -0.75, 0.0)
#: Atom budget for PLD / RDP: s is grouped into blocks to stay under it.
ATOM_BUDGET = 1_200_000
#: x window of each slice for the atoms: ±(_X_SDS sd + 3), the rest charged (Hoeffding).
_X_SDS = 9.0
#: Relative slack on the upper CDF values of n_⊥ from scipy's incomplete beta (measured
#: ~1e-9 relative at 5e5; the project's convention, numerics.binom_tail_mass).
_CDF_SLACK = 1e-6
_ABS_SLACK = 1e-290


@dataclass(frozen=True)
class HiddenPair:
    """Parameters of one hidden-⊥ pair (validated by ``hidden_pair``).

    n users; ``law`` the roles of one round (``pairs.law.CloneLaw``): the others' clone
    probability p, the victim's bias (carried by its log-odds, so β = 1 − α is exact at any
    ε0), the neutral weight κ of a ⊥ (p for pure LDP, e^−ε0 for the trimmed Gaussian), the
    rate γ (check-in) or m/n (without replacement, ``size`` = m), and c_γ the trimmed
    victim's mass (1 for pure LDP).
    """

    n: int
    law: CloneLaw
    size: int | None = None

    @property
    def p(self) -> float:
        return self.law.p

    @property
    def kappa(self) -> float:
        return self.law.kappa

    @property
    def rate(self) -> float:
        return self.law.rate

    @property
    def c_gamma(self) -> float:
        return self.law.c_gamma

    @property
    def bias(self) -> Bias:
        return self.law.bias

    @property
    def log_ratio(self) -> float:
        """Largest privacy loss of the pair: log(α/β), the bias's log-odds (exact)."""
        return self.law.log_ratio

    # ----- the Pair protocol (pairs/base.py): upper bounds, nats ------------------------
    #: The pair is symmetric under swapping a and b: a PLD composes one direction.
    pld_symmetric = True

    def delta(self, eps: float) -> float:
        """``hidden_delta``: δ(ε) of the dominating cells, the charge not included."""
        return hidden_delta(self, float(eps))

    def epsilon(self, delta: float) -> float:
        """``hidden_epsilon``: smallest certified ε with δ(ε) ≤ delta (charge excluded)."""
        return hidden_epsilon(self, float(delta))

    def eps_hi(self) -> float:
        return self.log_ratio

    def rdp(self, orders) -> np.ndarray:
        return hidden_rdp(self, orders)

    def max_order(self) -> int:
        return max_order(self)

    def pld_atoms(self):
        return hidden_pld_atoms(self)

    def charge(self, rounds: int) -> float:
        """1 − c_γ^T: the trimmed victim's left-out mass over T rounds (0 when c_γ = 1)."""
        return -math.expm1(rounds * math.log(self.c_gamma))


def hidden_pair(n, p, *, log_odds, kappa, rate=None, size=None, c_gamma=1.0) -> HiddenPair:
    """Validated ``HiddenPair``: exactly one of ``rate`` (check-in γ) and ``size`` (m).

    The victim is given by its log-odds L = log(α/β) (ε0 for an ε0-LDP randomizer), never
    by α: α rounds to 1 from L ≈ 36.7 on, and 1 − α loses digits from L ≈ 19.
    """
    n = v.integer("n", n, lo=1)
    p = v.real("p", p, lo=0.0, hi=1.0, lo_open=True)
    log_odds = v.real("log_odds", log_odds, lo=0.0)
    kappa = v.real("kappa", kappa, lo=0.0, lo_open=True)
    c_gamma = v.real("c_gamma", c_gamma, lo=0.0, hi=1.0, lo_open=True)
    if (rate is None) == (size is None):
        raise ValueError("give exactly one of rate (check-in) and size (without replacement)")
    if size is not None:
        size = v.integer("size", size, lo=1, hi=n)
        rate = size / n
    else:
        rate = v.real("rate", rate, lo=0.0, hi=1.0, lo_open=True)
    bias = Bias(log_odds)
    if not bias.beta > 0.0:
        raise ValueError(f"log_odds must be at most ~745 (beta = 1/(1 + e^log_odds) must be a "
                         f"positive float); got {log_odds!r}")
    return HiddenPair(n, CloneLaw(bias, p, kappa, float(rate), c_gamma), size)


# ----------------------------------------------------------------------------------------
# Cells
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cells:
    c: np.ndarray        # slice sizes (s − 1 of the block's smallest s)
    alpha: np.ndarray    # victim bias of each dominating slice
    beta: np.ndarray     # its complement, formed directly (Bias.diluted), never 1 − alpha
    gamma: np.ndarray    # alpha − beta, formed directly (small ε0: both round to ½)
    w: np.ndarray        # weights (equal under P and Q)
    zero: float          # weight of the s = 0 cells (no informative report: loss 0)
    worst: float         # weight charged at the most informative slice (c = 0, α)
    exact: bool          # True when every cell is exact (no grouping)


def _bias_eff(hp: HiddenPair, s, nbot):
    """(α_eff, β_eff, γ_eff) of the slice with s informative reports and n_⊥ hidden ⊥s."""
    return hp.bias.diluted(s, hp.kappa * np.asarray(nbot, dtype=float))


def _log_cdf_upper(N, q, k):
    """log of an upper bound on Pr[Bin(N, q) ≤ k] (vectorised in N and k; k < 0 → −inf)."""
    N = np.asarray(N, dtype=float)
    k = np.asarray(k, dtype=float)
    N, k = np.broadcast_arrays(N, k)
    out = np.zeros(N.shape)
    neg = k < 0
    full = k >= N
    mid = ~neg & ~full
    if np.any(mid):
        val = special.bdtr(k[mid].astype(np.int64), N[mid].astype(np.int64), q)
        with np.errstate(divide="ignore"):
            out[mid] = np.minimum(0.0, np.log(val * (1.0 + _CDF_SLACK) + 1e-300))
    out[neg] = -np.inf
    return out


_U = 2.0 ** -53


def _path_log_cdf_upper(N, q, K, ranking: bool | str = False, plan=None, F0=None):
    """log of certified upper bounds on Pr[Bin(N[r], q) ≤ K[r, j]] along rows where N falls
    by exactly 1 per row (the slices of ``_checkin_binned``); K (rows × J) is any integer
    array (thresholds held within a block, or moving by a step per row).

    scipy's ``bdtr`` was measured 3.5e-6 relative off at N = 1e9 (beyond the 1e-6 slack it
    was given) and costs ~0.3 s per 1e6 entries; here each column is certified once at
    its first regular row (``numerics.binom_cdf_bounds``: a summed tail with a geometric
    remainder) and carried down the rows by exact identities, Bin(N) being Bin(N − 1) plus
    a Bernoulli(q):

      Pr[Bin(N − 1) ≤ k] = Pr[Bin(N) ≤ k] + q·b(N − 1, k),
      Pr[Bin(N) ≤ k − 1] = Pr[Bin(N) ≤ k] − b(N, k),  Pr[Bin(N) ≤ k + 1] = … + b(N, k + 1),

    b the pmf, moved along the path by its exact ratios in log space. The rounding is
    bounded explicitly: η·Σ|terms| is added, η covering the log-pmf (1e-11), the chained
    log ratios (m·u·(8 + max|log b|)) and the sums. Rows with K < 0 (probability 0) or
    K ≥ N (probability 1) are exact; the next regular row restarts the certification.

    ``plan`` and ``F0``: the segments and their certified starts when the caller has them
    (``_path_starts``; the two bounds of ``_checkin_binned`` sum their starts' series in
    one call).
    """
    N = np.asarray(N, dtype=float)
    K = np.asarray(K, dtype=float)
    out, segs = _path_plan(N, K) if plan is None else plan
    if not segs:
        return out
    R = K.shape[0]
    lp = math.log1p(-q)
    # Every segment's certified start and first log-pmf in one vectorised call each.
    sj = np.array([x[0] for x in segs])
    s0 = np.array([x[1] for x in segs])
    if F0 is not None:
        pass
    elif ranking:
        # Only to rank candidate ε0 (never a reported value): the regularised incomplete
        # beta, Pr[Bin(N, q) ≤ k] = I_{1−q}(N − k, k + 1) (scipy, measured within 3e-10 of
        # the certified series up to N = 1e10, microseconds instead of O(√N) terms).
        kk = K[s0, sj]
        F0 = np.minimum(1.0, special.betainc(N[s0] - kk, kk + 1.0, 1.0 - q) * (1.0 + 1e-9))
    else:
        F0 = binom_cdf_bounds_many(K[s0, sj], N[s0], q)[1]
    nxt_row = np.minimum(s0 + 1, R - 1)
    base = binom_logpmf_pairs(K[s0, sj], N[nxt_row], q)
    rows = sum(r1 - r0 for _, r0, r1 in segs)
    long = rows >= _LONG_RUNS * len(segs)
    if long or rows >= _BLOCK_ROWS * len(segs):
        # long runs, or blocks of cells with many rows: the columns of a block whose
        # thresholds hold are carried together on the block's contiguous rows (no gather)
        done = _still_blocks_log_cdf(out, N, K, segs, q, lp, F0, base)
        if done.all():
            return out
        left = np.flatnonzero(~done)
    else:
        left = None
    if long:                            # a few long runs: contiguous slices, one by one
        for i in left:
            j, r0, r1 = segs[i]
            out[r0:r1, j] = _segment_log_cdf(N[r0:r1], K[r0:r1, j], q, lp, float(F0[i]),
                                             float(base[i]))
    elif left is None:                  # many short runs: all at once
        _segments_log_cdf(out, N, K, segs, q, lp, F0, base)
    else:
        _segments_log_cdf(out, N, K, [segs[i] for i in left], q, lp,
                          np.asarray(F0, dtype=float)[left], np.asarray(base, dtype=float)[left])
    return out


def _path_plan(N, K):
    """The runs of ``_path_log_cdf_upper``: ``out`` (rows × J) with its irregular rows set
    (K < 0: −inf; K ≥ N: 0) and the segments (column, first row, end row) of regular rows,
    a segment restarted where the threshold falls by more than 2."""
    R, J = K.shape
    out = np.empty((R, J))
    # The rows' regularity and the segment starts for all columns at once (contiguous
    # (R, J) operations; the segments are then listed column by column, as before).
    reg = (K >= 0) & (K < N[:, None])
    all_reg = bool(reg.all())
    if not all_reg:
        irr = ~reg
        out[irr] = np.where(K[irr] < 0, -np.inf, 0.0)
    # A fall of the threshold by more than 2 (a block boundary) restarts: subtracting
    # the run of pmfs between the thresholds would cancel (the new CDF can be far
    # smaller than the old one).
    first = reg.copy()
    if R > 1:
        first[1:] &= ~reg[:-1] | ((K[1:] - K[:-1]) < -2)
    segs = []
    for j in range(J):
        starts = np.flatnonzero(first[:, j])
        nxt = np.append(starts[1:], R)
        if all_reg:
            ends = nxt
        else:
            ends = np.empty_like(starts)
            regj = reg[:, j]
            for i, (r0, r1) in enumerate(zip(starts, nxt)):
                irr_j = np.flatnonzero(~regj[r0:r1])
                ends[i] = r0 + (int(irr_j[0]) if irr_j.size else r1 - r0)
        segs.extend((j, r0, r1) for r0, r1 in zip(starts.tolist(), ends.tolist()))
    return out, segs


def _path_starts(N, K):
    """(plan, thresholds, trials): ``_path_plan(N, K)`` and the (k, N) of its segment
    starts, whose certified CDFs ``_path_log_cdf_upper`` takes as ``F0``."""
    N = np.asarray(N, dtype=float)
    K = np.asarray(K, dtype=float)
    plan = _path_plan(N, K)
    sj = np.array([x[0] for x in plan[1]], dtype=np.int64)
    s0 = np.array([x[1] for x in plan[1]], dtype=np.int64)
    return plan, K[s0, sj], N[s0]


def _still_blocks_log_cdf(out, N, K, segs, q, lp, F0, base) -> np.ndarray:
    """``_segment_log_cdf`` for the segments (j, r0, r1) of ``segs`` (≥ 2 rows) whose
    threshold holds along the whole run, those sharing their rows (the columns of one block
    of cells) in one ``_still_runs_log_cdf`` call: the run's N is the same slice for each,
    and its thresholds are one number per column, so the matrices are a broadcast (no
    gather, no per-column calls). Each value is computed by the same operations on the same
    numbers as one column at a time (rows of a matrix: elementwise steps, and each cumulative
    sum along its own row), written into ``out``; returns which segments were done."""
    done = np.zeros(len(segs), dtype=bool)
    groups = {}
    for i, (j, r0, r1) in enumerate(segs):
        if r1 - r0 >= 2:
            groups.setdefault((r0, r1), []).append(i)
    for (r0, r1), idx in groups.items():
        # per column: the threshold holds (no change from row to row; one flat comparison,
        # then column by column only where some column moves)
        moved = K[r0 + 1:r1] != K[r0:r1 - 1]
        if moved.any():
            idx = [i for i in idx if not moved[:, segs[i][0]].any()]
        if not idx:
            continue
        ii = np.array(idx)
        js = np.array([segs[i][0] for i in idx])
        kr = K[r0, js][:, None]
        Nr = np.broadcast_to(N[r0 + 1:r1], (ii.size, r1 - r0 - 1))
        res = _still_runs_log_cdf(Nr, kr, np.full(ii.size, r1 - r0), q, lp,
                                  np.asarray(F0, dtype=float)[ii],
                                  np.asarray(base, dtype=float)[ii], stacked=True)
        out[r0:r1, js] = res.T
        done[ii] = True
    return done


#: Mean run length from which ``_path_log_cdf_upper`` carries each run by its own call
#: (below it, all runs side by side in one padded matrix: the same floats; the ranking
#: cells' 42 runs of ~800 rows at 1.5e8 users: 7.2 → 5.4 ms).
_LONG_RUNS = 2048
#: Mean run length from which ``_path_log_cdf_upper`` carries a block's held columns
#: together (``_still_blocks_log_cdf``) below ``_LONG_RUNS`` too: the ranking cells at
#: 10⁷–10⁸ users, 6–7 blocks of ~10³ rows, 1.9 → 1.4 ms a bound; below ~600 rows one padded
#: matrix of every run costs less (measured: equal at 500–800).
_BLOCK_ROWS = 640


def _segments_log_cdf(out, N, K, segs, q, lp, F0, base):
    """``_segment_log_cdf`` for every segment (j, r0, r1) at once, written into ``out``:
    the segments side by side as rows of a padded matrix (``_runs_log_cdf``)."""
    sj = np.array([x[0] for x in segs], dtype=np.int64)
    r0 = np.array([x[1] for x in segs], dtype=np.int64)
    lens = np.array([x[2] - x[1] for x in segs], dtype=np.int64)
    one = lens == 1
    for i in np.flatnonzero(one):
        out[r0[i], sj[i]] = math.log(min(float(F0[i]), 1.0) + 1e-300)
    multi = np.flatnonzero(~one)
    if multi.size == 0:
        return
    sj, r0, lens = sj[multi], r0[multi], lens[multi]
    col = np.arange(int(lens.max()))
    valid = col[None, :] < lens[:, None]
    rows = np.where(valid, r0[:, None] + col[None, :], r0[:, None])
    F0m, basem = np.asarray(F0, dtype=float)[multi], np.asarray(base, dtype=float)[multi]
    # Does every run's threshold hold (the ranking cells' blocks)? Then ``_runs_log_cdf``
    # takes its still path; called directly, with each run's threshold as one number (the
    # gathered matrix holds that number in every place, padding included) and the result
    # written at once.
    moves = np.zeros((K.shape[0], K.shape[1]), dtype=np.int64)
    np.cumsum(K[1:] != K[:-1], axis=0, out=moves[1:])
    if not np.any(moves[r0 + lens - 1, sj] - moves[r0, sj]):
        F = _still_runs_log_cdf(N[rows[:, 1:]], K[r0, sj][:, None], lens, q, lp, F0m, basem,
                                stacked=True)
        out[rows[valid], np.broadcast_to(sj[:, None], rows.shape)[valid]] = F[valid]
        return
    res = _runs_log_cdf(N[rows], K[rows, sj[:, None]], lens, q, lp, F0m, basem)
    for s_, f in enumerate(res):
        out[r0[s_]:r0[s_] + f.size, sj[s_]] = f


def _segment_log_cdf(N, k, q, lp, F0=None, base=None):
    """``_path_log_cdf_upper`` on one run of regular rows (0 ≤ k < N throughout), as a
    one-row ``_runs_log_cdf`` (no copy of the run); ``F0`` (the certified upper CDF at the
    first row) and ``base`` (log b(N[1], k[0])) when the caller computed them for many
    segments at once."""
    m = N.size
    if F0 is None:
        F0 = binom_cdf_bounds(int(k[0]), int(N[0]), q)[1]
    if m == 1:
        return np.array([math.log(min(F0, 1.0) + 1e-300)])
    if base is None:
        base = float(binom_logpmf(np.array([k[0]]), int(N[1]), q)[0])
    return _runs_log_cdf(N[None, :], k[None, :], np.array([m]), q, lp,
                         np.array([float(F0)]), np.array([float(base)]))[0]


def _runs_log_cdf(Ns, ks, lens, q, lp, F0, base, still_path: bool = True) -> list:
    """The path identities along runs of rows given as the rows of (S × M) matrices
    ``Ns``, ``ks`` (run s uses its first ``lens[s]`` ≥ 2 entries; the rest is padding):
    the log of the certified upper CDF at every row of every run. Every cumulative sum is
    taken along its own row, so each run's values are computed by the same operations, in
    the same order, whatever runs share the matrix. ``still_path=False``: never the
    shortcut for runs whose thresholds do not move (tests)."""
    S = lens.size
    Nr, kp, kr = Ns[:, 1:], ks[:, :-1], ks[:, 1:]
    tvalid = np.arange(Nr.shape[1])[None, :] < (lens - 1)[:, None]
    D = np.where(tvalid, (kr - kp), 0.0).astype(np.int64)
    mv = D != 0                                # rows where the threshold moves (row-major)
    if still_path and not mv.any():
        return _still_runs_log_cdf(Nr, kr, lens, q, lp, F0, base)
    Dm, Nm, km = D[mv], Nr[mv], kp[mv]
    with np.errstate(divide="ignore", invalid="ignore"):
        dn1 = np.log(km * (1.0 - q)) - np.log((Nm - km + 1.0) * q)           # k → k − 1
        dn2 = np.log((km - 1.0) * (1.0 - q)) - np.log((Nm - km + 2.0) * q)   # k − 1 → k − 2
        up1 = np.log((Nm - km) * q) - np.log((km + 1.0) * (1.0 - q))         # k → k + 1
        up2 = np.log((Nm - km - 1.0) * q) - np.log((km + 2.0) * (1.0 - q))  # k + 1 → k + 2
    # log b(N, kr) − log b(N, kp) at the moving rows (|D| ≤ 2 here; rises > 2 below)
    Lm = np.select([Dm == -1, Dm == -2, Dm == 1, Dm == 2],
                   [dn1, dn1 + dn2, up1, up1 + up2], default=0.0)
    mv_s, mv_i = np.nonzero(mv)
    bridges = []
    for t in np.flatnonzero(Dm > 2):   # a rise by more than 2: a run of pmfs, all added
        si, i = int(mv_s[t]), int(mv_i[t])   # (falls by more than 2 start a new segment)
        kk = kp[si, i] + 1.0 + np.arange(int(D[si, i]), dtype=float)  # b(N, kp + 1) … b(N, kr)
        lr = np.log((Nr[si, i] - kk[:-1]) * q) - np.log((kk[:-1] + 1.0) * (1.0 - q))
        rel = float(up1[t]) + np.concatenate([[0.0], np.cumsum(lr)])   # log b(N, kk) − ℓ0
        bridges.append((si, i, rel))
        Lm[t] = rel[-1]
    Lk = np.zeros(Nr.shape)
    Lk[mv] = Lm
    # ℓ0[r] = log b(Nr[r], kp[r]), chained from one log-pmf: move k to kr, then N to N − 1.
    with np.errstate(divide="ignore", invalid="ignore"):
        LN = np.log1p(-kr / Nr) - lp
    inc = Lk[:, :-1] + LN[:, :-1]
    l0 = base[:, None] + np.concatenate([np.zeros((S, 1)), _row_cumsum(inc)], axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        e0 = np.exp(l0)
    c = q * e0                         # Pr[Bin(N − 1) ≤ k] − Pr[Bin(N) ≤ k] = q·b(N − 1, k)
    a = c.copy()
    if Dm.size:
        l0m = l0[mv]
        step = np.where(Dm <= -1, -np.exp(l0m), 0.0)                       # − b(N, kp)
        step += np.where(Dm == -2, -np.exp(l0m + dn1), 0.0)                # − b(N, kp − 1)
        step += np.where((Dm >= 1) & (Dm <= 2), np.exp(l0m + up1), 0.0)    # + b(N, kp + 1)
        step += np.where(Dm == 2, np.exp(l0m + up1 + up2), 0.0)            # + b(N, kp + 2)
        c[mv] += step
        a[mv] += np.abs(step)
    tops = np.zeros(S, dtype=np.int64)
    for si, i, rel in bridges:
        v = float(np.sum(np.exp(l0[si, i] + rel)))
        c[si, i] += v
        a[si, i] += v
        tops[si] = max(tops[si], int(D[si, i]))
    C = _row_cumsum(c)
    A = _row_cumsum(a)
    res = []
    for s_ in range(S):
        m = int(lens[s_])
        eta = 1e-11 + (m + 8 + int(tops[s_])) * _U * (8.0 + float(np.max(np.abs(l0[s_, :m - 1]))))
        f0 = float(F0[s_])
        F = np.concatenate([[f0], f0 + C[s_, :m - 1] + eta * (A[s_, :m - 1] + f0)])
        with np.errstate(divide="ignore"):
            res.append(np.log(np.minimum(np.maximum(F, 0.0), 1.0) + 1e-300))
    return res


#: Row length from which ``_row_cumsum`` runs one 1-D call per row.
_ROW_CUMSUM_MIN = 256


def _row_cumsum(x, out=None):
    """``np.cumsum(x, axis=1)`` of a 2-D array (into ``out``, which must not overlap x): the
    same sequential sums, row by row where rows are long. numpy holds the GIL through a
    2-D accumulate but releases it for a 1-D one into another array, so the two CDF
    bounds of ``_checkin_binned`` then run side by side on two threads."""
    if out is None:
        out = np.empty(x.shape)
    if x.shape[1] < _ROW_CUMSUM_MIN:
        return np.cumsum(x, axis=1, out=out)
    return accumulate_rows(np.add, x, out)


def _still_runs_log_cdf(Nr, kr, lens, q, lp, F0, base, stacked: bool = False):
    """``_runs_log_cdf`` where no threshold moves along any run (one block of cells, the
    ε0 search's case above ~1e9 users): the same operations on the same values, without
    the pmf steps (all zero: adding 0.0 and its cumulative sums change nothing, and the
    absolute sums equal the signed ones), in place where a temporary is not needed.
    Bit-identical to the general path (tests/test_sampled_d2_floor.py).

    ``kr`` may be one threshold per run (S × 1) and ``Nr`` a broadcast. ``stacked``: the
    result as one (S × M) matrix, each run's values at the start of its row (the same
    values as the list, computed row for row; the rest of a row is padding)."""
    S = lens.size
    with np.errstate(divide="ignore", invalid="ignore"):
        LN = np.divide(-kr, Nr)
        np.log1p(LN, out=LN)
        LN -= lp
    l0 = np.empty(Nr.shape)
    l0[:, 0] = 0.0
    _row_cumsum(LN[:, :-1], out=l0[:, 1:])
    l0 += base[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        c = np.exp(l0)
    c *= q                             # Pr[Bin(N − 1) ≤ k] − Pr[Bin(N) ≤ k] = q·b(N − 1, k)
    C = _row_cumsum(c)
    # The closing steps for every run at once (elementwise, per row: the same floats as
    # one run at a time; a run's values beyond its length are padding, never read).
    lens = np.asarray(lens, dtype=np.int64)
    M = l0.shape[1] + 1
    np.abs(l0, out=l0)                 # (l0 is not needed any more)
    if bool(np.all(lens == M)):
        big = np.max(l0, axis=1)
    else:                              # the max over each run's own m − 1 values
        big = np.max(np.where(np.arange(M - 1)[None, :] < (lens - 1)[:, None], l0, 0.0),
                     axis=1)
    # η = 1e-11 + (m + 8)·u·(8 + max|log b|), in the same order of operations
    eta = 1e-11 + (lens + 8).astype(float) * _U * (8.0 + big)
    f0 = np.asarray(F0, dtype=float)[:, None]
    F = np.empty((S, M))
    F[:, :1] = f0
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.add(C, f0, out=F[:, 1:])    # f0 + C … (the sum of reals commutes)
        A = C + f0                         # A = C here: eta·(A + f0)
        A *= eta[:, None]
        t += A
    np.maximum(F, 0.0, out=F)
    np.minimum(F, 1.0, out=F)
    F += 1e-300
    with np.errstate(divide="ignore", invalid="ignore"):
        np.log(F, out=F)
    if stacked:
        return F
    return [F[s_, :int(lens[s_])] for s_ in range(S)]


@functools.lru_cache(maxsize=16)
def hidden_cells(hp: HiddenPair, budget: int = ATOM_BUDGET,
                 ranking: bool | str = False) -> Cells:
    """The dominating cells of ``hp`` (see the module docstring).

    ``ranking=True``: the distribution functions that start each run of check-in cells
    above 10⁶ trials come from scipy's incomplete beta (accurate, not certified) — only for
    searches that rank candidate ε0; the chosen ε0 is evaluated with certified cells.
    ``ranking=SAMPLED``: the same, with one block's sums over the window read on a lattice
    (``_checkin_sampled_rows``) and, up to 10⁶ trials, runs carried from incomplete-beta
    starts where the blocks have 8 rows or more (the ε0 search over several rounds)."""
    if hp.size is not None:
        return _wor_cells(hp, budget)
    if hp.n <= EXACT_N:
        return _checkin_exact(hp)
    return _checkin_binned(hp, budget, ranking)


def _norm(hp):
    return hp.kappa * hp.n * hp.c_gamma


def _checkin_exact(hp: HiddenPair) -> Cells:
    n, g, p, k = hp.n, hp.rate, hp.p, hp.kappa
    mu = g * p
    q = (1.0 - g) / (1.0 - mu) if mu < 1.0 else 0.0
    cs, als, bes, gas, ws, zero = [], [], [], [], [], 0.0
    for s in range(0, n + 1):
        ls = float(binom_logpmf(np.array([s]), n, mu)[0])
        nb = np.arange(0, n - s + 1)
        lw = ls + binom_logpmf(nb, n - s, q) if q > 0 else np.where(nb == 0, ls, -np.inf)
        w = np.exp(lw) * (k * nb + s) / _norm(hp)
        if s == 0:
            zero += float(w.sum())
            continue
        live = w > 0
        cs.append(np.full(int(live.sum()), s - 1))
        al, be, ga = _bias_eff(hp, s, nb[live])
        als.append(al)
        bes.append(be)
        gas.append(ga)
        ws.append(w[live])
    return Cells(np.concatenate(cs).astype(np.int64), np.concatenate(als), np.concatenate(bes),
                 np.concatenate(gas), np.concatenate(ws),
                 zero, 0.0, True)


def _block_width(n_s, bins, s_mean, budget):
    if budget is None:                 # δ(ε) only: no atoms, every s its own cell
        return 1
    per = (2.0 * _X_SDS * 0.5 * math.sqrt(max(s_mean, 1.0)) + 10.0) * bins
    return max(1, int(math.ceil(n_s * per / budget)))


def _wor_cells(hp: HiddenPair, budget: int) -> Cells:
    n, m, p, k = hp.n, hp.size, hp.p, hp.kappa
    nbot = n - m
    exact = m <= EXACT_N
    lo, hi = (0, m) if exact else binom_window(m, p, _S_SDS, _S_EXTRA)
    s = np.arange(lo, hi + 1)
    W = np.exp(binom_logpmf(s, m, p)) * (k * nbot + s) / _norm(hp)
    zero = float(W[0]) if s[0] == 0 else 0.0
    keep = s >= 1
    s, W = s[keep], W[keep]
    worst = 0.0
    if not exact:
        worst = binom_tail_mass(m, p, lo, hi) * (1.0 + 1.0 / k) / hp.c_gamma
    B = 1 if exact else _block_width(s.size, 1, m * p, budget)
    starts = np.arange(0, s.size, B)
    ends = np.minimum(starts + B, s.size) - 1
    c = s[starts] - 1
    alpha, beta, gamma = _bias_eff(hp, s[ends], nbot)
    w = np.add.reduceat(W, starts) if s.size else np.zeros(0)
    return Cells(c.astype(np.int64), np.asarray(alpha, dtype=float),
                 np.asarray(beta, dtype=float), np.asarray(gamma, dtype=float), w, zero, worst,
                 exact or B == 1)


def _checkin_binned(hp: HiddenPair, budget: int, ranking: bool | str = False) -> Cells:
    n, g, p, k = hp.n, hp.rate, hp.p, hp.kappa
    mu = g * p
    q = (1.0 - g) / (1.0 - mu)
    lo, hi = binom_window(n, mu, _S_SDS, _S_EXTRA)
    if ranking == SAMPLED:
        cl = _checkin_sampled_rows(hp, budget, lo, hi)
        if cl is not None:
            return cl
    s_all = np.arange(lo, hi + 1)
    N_all = (n - s_all).astype(float)

    def weights():
        ls = binom_logpmf(s_all, n, mu)
        return np.exp(ls) * (k * N_all * q + s_all) / _norm(hp)

    def tail_mass():
        return binom_tail_mass(n, mu, lo, hi) * (1.0 + 1.0 / k) / hp.c_gamma

    keep = s_all >= 1
    s, N = s_all[keep], N_all[keep]
    J = 1 if q <= 0.0 else len(_NBOT_Z)
    if s.size == 0 or q <= 0.0:
        W_all, worst = weights(), tail_mass()
        zero = float(W_all[0]) if s_all[0] == 0 else 0.0
        W = W_all[keep]
        if s.size == 0:
            return Cells(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0),
                         np.zeros(0), zero, worst, False)
        B = _block_width(s.size, J, n * mu, budget)
        starts = np.arange(0, s.size, B)
        w = np.add.reduceat(W, starts)               # γ = 1: n_⊥ = 0 always
        return Cells((s[starts] - 1).astype(np.int64), np.full(starts.size, hp.bias.alpha),
                     np.full(starts.size, hp.bias.beta), np.full(starts.size, hp.bias.gamma), w,
                     zero, worst, B == 1)
    B = _block_width(s.size, J, n * mu, budget)
    starts = np.arange(0, s.size, B)
    ends = np.minimum(starts + B, s.size) - 1
    # Common n_⊥ edges per block (n_⊥ | s ~ Bin(n − s, q)), below the block's smallest
    # conditional mean. Under the size-biased weights (κ n_⊥ + s) the law of n_⊥ given s
    # mixes Bin(N, q) (share s) and 1 + Bin(N − 1, q) (share κNq).
    z = np.array(_NBOT_Z)
    mean_b = N[ends] * q
    sd_b = np.sqrt(N[starts] * q * (1.0 - q))
    edges = np.maximum(0.0, np.floor(mean_b[:, None] + z[None, :] * sd_b[:, None]))
    blk = np.repeat(np.arange(starts.size), ends - starts + 1)
    E = edges[blk]                                   # (n_s, J)
    mix_a = (s / (s + k * N * q))[:, None]
    series = float(N.max()) > BDTR_MAX_N
    merged = None
    if series or (ranking == SAMPLED and B >= 8):
        # above 1e6 trials scipy's bdtr is not accurate enough; for SAMPLED ranking with
        # blocks of 8 rows or more, the runs' start values from the incomplete beta carried
        # by the path identities cost ~0.1 µs per entry against bdtr's ~1 µs (ranking
        # only: the same ε0 at 80 settings with 10³–10⁶ users; see also
        # ``_checkin_sampled_rows``)
        if series and not ranking:
            # The two bounds' certified starts in one series call where together they are
            # enough entries for its column form (``numerics.binomial._column_pass``: one
            # Python step per term row, so twice the entries cost about the same steps);
            # each entry's floats are its own, whatever the batch. Fewer entries: each
            # bound's series on its own thread (numpy's product chains release the GIL).
            (p1, k1, n1), (p2, k2, n2) = _path_starts(N, E - 1.0), _path_starts(N - 1.0, E - 2.0)
            if k1.size + k2.size >= 2 * _binomial._COLUMN_MIN:
                merged = (p1, p2, k1.size, np.concatenate([k1, k2]), np.concatenate([n1, n2]))

        if merged is None:
            def upper(shift):
                return np.exp(_path_log_cdf_upper(N - shift, q, E - (1.0 + shift), ranking))
            # certified series (≥ 10⁴ terms each) or ~0.1 µs an entry along the runs
            work = math.inf if series and not ranking else 0.1 * s.size * J
        else:
            # the series first, beside the rows' weights and the window's tail mass
            (F0s, _), (W_all, worst) = pmap(
                lambda job: job(),
                (lambda: (binom_cdf_bounds_many(merged[3], merged[4], q)[1], None),
                 lambda: (weights(), tail_mass())))
            F0s = (F0s[:merged[2]], F0s[merged[2]:])

            def upper(shift):
                i = int(shift)
                return np.exp(_path_log_cdf_upper(N - shift, q, E - (1.0 + shift), ranking,
                                                  plan=merged[i], F0=F0s[i]))
            work = 0.1 * s.size * J     # the runs only, ~0.1 µs an entry
    else:
        def upper(shift):
            return np.exp(_log_cdf_upper(N[:, None] - shift, q, E - (1.0 + shift)))
        work = 0.0          # scipy's bdtr on integers holds the GIL (measured): one thread
    # u1 = Pr[Bin(N, q) ≤ E − 1] and u2 = Pr[Bin(N − 1, q) ≤ E − 2] (upper bounds) are
    # independent and cost about the same (their series and runs are numpy calls, and
    # scipy's betainc, that release the GIL): on two threads where each has ~1 ms of work
    # or more (the hand-off costs ~0.1 ms), the rows' weights beside u1 and the mass
    # outside the window beside u2; the same floats.
    if merged is not None:      # the weights and tail mass are there already
        u1, u2 = (pmap(upper, (0.0, 1.0)) if work >= _PAIR_THREADED_US
                  else (upper(0.0), upper(1.0)))
    elif work >= _PAIR_THREADED_US:
        (u1, W_all), (u2, worst) = pmap(lambda job: job(),
                                        (lambda: (upper(0.0), weights()),
                                         lambda: (upper(1.0), tail_mass())))
    else:
        W_all, worst = weights(), tail_mass()
        u1, u2 = upper(0.0), upper(1.0)
    zero = float(W_all[0]) if s_all[0] == 0 else 0.0
    W = W_all[keep]
    U, frac = _bin_shares(mix_a, u1, u2)
    worst += float(np.dot(W, U[:, 0]))
    Wf = np.repeat(W[:, None], frac.shape[1], axis=1)   # W·frac, in contiguous loops
    Wf *= frac
    wj = np.add.reduceat(Wf, starts, axis=0)        # (blocks, J)
    alpha, beta, gamma = _bias_eff(hp, s[ends][:, None], edges)
    c = np.broadcast_to((s[starts] - 1)[:, None], wj.shape)
    # Bin-major order: within a bin the slices run over consecutive c (fast δ kernel).
    wj, alpha, beta, gamma, c = wj.T, alpha.T, beta.T, gamma.T, c.T
    live = wj > 0
    return Cells(c[live].astype(np.int64), alpha[live].astype(float), beta[live].astype(float),
                 gamma[live].astype(float), wj[live], zero, worst,
                 False)


#: Rows (s) per standard deviation of the smooth sums that ``SAMPLED`` ranking reads on a
#: lattice (``_checkin_sampled_rows``; aliasing e^−2π²·16 ≈ 1e-137 of the sum).
_LATTICE_PER_SD = 4.0


#: Estimated µs of work per CDF bound from which ``_checkin_binned`` computes its two bounds
#: on two threads (below, the hand-off costs about what it saves).
_PAIR_THREADED_US = 1000.0


def _bin_shares(mix_a, u1, u2):
    """(U, shares): U = min(1, a·u1 + (1 − a)·u2) made non-decreasing over the bins (a
    running maximum along each row), and each bin's share of it (successive differences,
    the last bin's 1 − U). Column by column: the same maxima and differences as
    maximum.accumulate / diff along the short axis, whose per-row inner loops cost ~4x more
    at 1e5 rows."""
    # U = min(1, a·u1 + (1 − a)·u2) with a repeated over the bins first: the same products
    # and sums, in numpy's fast contiguous loops instead of a 6-element inner loop per row
    a = np.repeat(mix_a, u1.shape[1], axis=1)
    U = a * u1
    np.subtract(1.0, a, out=a)
    a *= u2
    U += a
    np.minimum(U, 1.0, out=U)
    for j in range(1, U.shape[1]):
        np.maximum(U[:, j - 1], U[:, j], out=U[:, j])
    frac = np.empty(U.shape)
    for j in range(U.shape[1] - 1):
        np.subtract(U[:, j + 1], U[:, j], out=frac[:, j])
    np.subtract(1.0, U[:, -1], out=frac[:, -1])
    return U, frac


def _checkin_sampled_rows(hp: HiddenPair, budget, lo: int, hi: int) -> Cells | None:
    """``_checkin_binned`` for ranking ε0 (``SAMPLED``) when the cells are one block (above
    ~2·10⁶ expected informative reports: the pair built for 10¹⁰ users), with the window's
    rows read on a lattice: None where that does not apply.

    One block's cells are the same slices (c, α, β, γ: the same floats), and their weights
    are sums over the window's ~8·10⁴ rows s of W(s)·(share of the n_⊥ bin at s), a
    product of a binomial pmf in s (standard deviation σ_s rows) and distribution functions
    of n_⊥ ~ Bin(n − s, q) at fixed thresholds (moving on a scale of σ_⊥/q rows). By
    Poisson summation a sum over every row of a function that smooth equals h times its
    sum over every h-th row up to terms of order exp(−2π²(σ/h)²): with h = σ/4, 1e-137
    (σ/16, σ/8 and σ/2 gave the same weights to 1e-11). The distribution functions at
    those rows come from scipy's incomplete beta (the ranking's start values, within 3e-10
    of the certified series; ~8 µs each at these sizes), so the weights move by ≤ 8e-10
    relative, ~30 ms → ~5 ms per ε0 at 10¹⁰ users. Ranking only: the
    chosen ε0 is evaluated on certified cells, and the chosen ε0 was the same as with
    every row at every setting compared (tests/test_gaussian_sampling.py)."""
    n, g, p, k = hp.n, hp.rate, hp.p, hp.kappa
    mu = g * p
    q = (1.0 - g) / (1.0 - mu)
    s_lo = max(int(lo), 1)
    rows = int(hi) - s_lo + 1
    if q <= 0.0 or q >= 1.0 or rows < 4096:
        return None
    J = len(_NBOT_Z)
    if _block_width(rows, J, n * mu, budget) < rows:
        return None                                  # several blocks: every row
    sd_s = math.sqrt(n * mu * (1.0 - mu))
    n_top, n_end = float(n - s_lo), float(n - hi)
    sd_u = math.sqrt(n_end * q * (1.0 - q)) / q      # rows over which the CDFs move by ~1
    h = int(min(sd_s, sd_u) / _LATTICE_PER_SD)
    if h < 2:
        return None
    centre = int(round(n * mu))
    first = s_lo + (centre - s_lo) % h
    s = np.arange(first, hi + 1, h)
    N = (n - s).astype(float)
    W = np.exp(binom_logpmf(s, n, mu)) * (k * N * q + s) / _norm(hp)
    zero = 0.0
    if lo == 0:
        zero = float(np.exp(binom_logpmf(np.array([0]), n, mu))[0] * (k * n * q) / _norm(hp))
    worst = binom_tail_mass(n, mu, lo, hi) * (1.0 + 1.0 / k) / hp.c_gamma
    # the block's edges and slices exactly as ``_checkin_binned`` forms them
    z = np.array(_NBOT_Z)
    edges = np.maximum(0.0, np.floor(n_end * q + z * math.sqrt(n_top * q * (1.0 - q))))[None, :]

    def cdf(NN, KK):
        KK = np.broadcast_to(KK, (NN.size, J))
        NN = np.broadcast_to(NN[:, None], KK.shape)
        out = np.where(KK < 0, 0.0, 1.0)
        mid = (KK >= 0) & (KK < NN)
        kk = KK[mid]
        out[mid] = np.minimum(1.0, special.betainc(NN[mid] - kk, kk + 1.0, 1.0 - q)
                              * (1.0 + 1e-9))
        return out

    # the two bounds' incomplete betas (~8 µs each, releasing the GIL) on two threads
    u1, u2 = pmap(lambda sh: cdf(N - sh, edges - (1.0 + sh)), (0.0, 1.0))
    mix_a = (s / (s + k * N * q))[:, None]
    U, frac = _bin_shares(mix_a, u1, u2)
    worst += h * float(np.dot(W, U[:, 0]))
    wj = h * (W @ frac)
    alpha, beta, gamma = _bias_eff(hp, np.array([[hi]]), edges)
    alpha, beta, gamma = (np.asarray(x, dtype=float).ravel() for x in (alpha, beta, gamma))
    c = np.full(J, s_lo - 1, dtype=np.int64)
    live = wj > 0
    return Cells(c[live], alpha[live], beta[live], gamma[live], wj[live], zero, worst, False)


# ----------------------------------------------------------------------------------------
# δ(ε) and ε(δ) of one round
# ----------------------------------------------------------------------------------------
def hidden_delta(hp: HiddenPair, eps: float, budget: int | None = None,
                 ranking: bool = False) -> float:
    """H_{e^ε}(P ‖ Q) of the dominating cells: a rigorous upper bound (either direction).

    Not including the trimming charge 1 − c_γ (callers add it).
    """
    eps = float(eps)
    cl = hidden_cells(hp, budget, ranking)
    h, err = _hockey_runs(cl.c, cl.alpha, cl.beta, cl.gamma, eps, _cells_memos(cl))
    total = float(np.dot(cl.w, h + err))
    if cl.worst > 0:
        b = hp.bias
        hw, ew = slice0_hockey(b.alpha, b.beta, b.gamma, eps)
        total += cl.worst * (hw + ew)
    # Weights carry ~1e-15 relative error each (log-pmf and products).
    return float(round_up(total * (1.0 + 1e-12) + _ABS_SLACK))


#: Up to this many cells ``_hockey_runs`` evaluates them in one direct call.
_DIRECT_CELLS = 4096
#: Cell sets whose threshold memos ``hidden_delta`` keeps (the most recent; the ε0
#: searches run one or two pairs' root searches at a time).
_MEMO_CELLS = 4
#: Array entries each of them keeps at most, shared among its runs by their sizes (~10 MB).
_MEMO_FLOATS = 1_200_000
_memos: dict = {}
_memos_lock = threading.Lock()
register(__name__ + "._memos", _memos)    # emptied by sd.clear_caches()


def _cells_memos(cl: Cells) -> dict:
    """The threshold memos (``conditional_hockey(memo=...)``) of the cells ``cl``, one per
    ``_hockey_runs`` call on them: every δ(ε) of a root search on one pair evaluates the
    same cells (``hidden_cells`` is cached), and near the root most thresholds repeat.
    Keyed by the object itself (held here, so its id is not reused while kept)."""
    key = id(cl)
    got = _memos.get(key)
    if got is not None and got[0] is cl:
        return got[1]
    with _memos_lock:
        got = _memos.get(key)
        if got is not None and got[0] is cl:
            return got[1]
        while len(_memos) >= _MEMO_CELLS:
            _memos.pop(next(iter(_memos)))
        runs: dict = {}
        _memos[key] = (cl, runs)
        return runs


def _run_memo(memos, start: int, share: float = 1.0):
    if memos is None:
        return None
    got = memos.get(start)
    if got is None:
        got = memos.setdefault(start, ThresholdMemo(int(_MEMO_FLOATS * share)))
    return got


def _hockey_runs(c, alpha, beta, gamma, eps, memos=None):
    """``conditional_hockey`` over maximal runs of consecutive c (its fast recurrence).

    ``memos``: a dict of ``ThresholdMemo`` per run start, for these very arrays (or None)."""
    if c.size <= _DIRECT_CELLS:
        # A few thousand cells: one vectorised call (conditional_hockey handles any c
        # directly) costs less than the per-run calls of the recurrence.
        return conditional_hockey(c, alpha, eps, with_error=True, beta=beta, gamma=gamma,
                                  memo=_run_memo(memos, -1))
    cuts = np.concatenate([[0], np.nonzero(np.diff(c) != 1)[0] + 1, [c.size]])
    if cuts.size - 1 > max(8, c.size // 64):
        # Short runs (the exact cells repeat each c once per n_⊥): one vectorised call
        # (conditional_hockey handles any c directly) beats thousands of tiny ones.
        return conditional_hockey(c, alpha, eps, with_error=True, beta=beta, gamma=gamma,
                                  memo=_run_memo(memos, -1))
    h = np.empty(c.shape)
    err = np.empty(c.shape)
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        if b > a:
            h[a:b], err[a:b] = conditional_hockey(c[a:b], alpha[a:b], eps, with_error=True,
                                                  beta=beta[a:b], gamma=gamma[a:b],
                                                  memo=_run_memo(memos, a, (b - a) / c.size))
    return h, err


def hidden_epsilon(hp: HiddenPair, delta: float, budget: int | None = None,
                   ranking: bool = False) -> float:
    """Smallest certified ε with ``hidden_delta(hp, ε) ≤ delta`` (certified end).

    ``budget``: cells merged into blocks to that many atoms (still a dominating pair, a
    little looser: for searches over ε0); None: every slice its own cell.
    """
    seen = {}

    def dlt(e):
        # δ(ε) once per ε: the root search starts from the bracket's two ends, which the
        # bracketing below has already evaluated (the same function of the same ε)
        if e not in seen:
            seen[e] = hidden_delta(hp, e, budget, ranking)
        return seen[e]

    hi = hp.log_ratio
    if dlt(0.0) <= delta:
        return 0.0
    if dlt(hi) > delta:
        return hi
    # Shrink the bracket geometrically first (answers are often 1e-3 of log(α/(1 − α))).
    lo = 0.0
    while hi > 1e-9:
        if dlt(hi / 8) <= delta:
            hi /= 8
        else:
            lo = hi / 8
            break
    # Regula falsi on log δ(ε) (nearly linear in ε): a few evaluations instead of ~30; the
    # end returned is certified exactly as bisection's (δ(ε) ≤ delta was evaluated there).
    return float(falling_log_root(dlt, delta, lo, hi, xtol=1e-12, rtol=1e-8))


# ----------------------------------------------------------------------------------------
# Atoms: PLD and RDP
# ----------------------------------------------------------------------------------------
#: Up to this many distinct slices ``hidden_atoms`` builds the atoms slice by slice.
_GROUPED_SLICES = 4096
#: The same for the ε0 search's ranking atoms (~10⁵ atoms, one thread): above ~50 small
#: slices one gathered pass costs less than the slice-by-slice loop (measured at 10⁵ users,
#: 125 slices: 12.5 → 9.5 ms; at 35 slices the loop is still 8 % faster).
_GROUPED_SLICES_RANKING = 48


def _atoms_grouped(cl, run, rstart, r0, alo, counts, inv, room: int = 0):
    """The atoms' (log P, log Q) of ``hidden_atoms``, one distinct slice c at a time: the
    cells of a block share c, and so their x window and their run of log Bin(c, ½) — read
    once as two slices of the run (x and x − 1) instead of gathered atom by atom. The same
    elementwise operations on the same values, in the same order of atoms: bit-identical
    to the gathered form (tests/test_sampled_d2_floor.py); ~2× less time for the ε0
    search's few large slices."""
    la_c = np.log(cl.alpha)
    lb_c = np.log(cl.beta)
    with np.errstate(divide="ignore"):
        lw_c = np.log(cl.w)
    offs = np.cumsum(counts) - counts
    total = int(counts.sum())
    logp = np.empty(total + room)               # room: ``_with_extra_atoms`` fills the end
    logq = np.empty(total + room)
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(rstart.size + 1))

    def fill(tasks):
        for u, cells in tasks:
            i0 = int(cells[0])
            L = int(counts[i0])                      # the same window for every cell of c
            b = int(rstart[u] - r0[u] + alo[i0])     # run index of x = alo
            lv = run[b:b + L]
            lu = np.empty(L)
            if alo[i0] - 1 >= r0[u]:
                lu[:] = run[b - 1:b - 1 + L]
            else:                                    # x = 0: no x − 1 in the run
                lu[0] = -np.inf
                lu[1:] = run[b:b + L - 1]
            la = la_c[cells][:, None]
            lb = lb_c[cells][:, None]
            lw = lw_c[cells][:, None]
            P = lw + np.logaddexp(la + lu, lb + lv)
            Q = lw + np.logaddexp(lb + lu, la + lv)
            for k, i in enumerate(cells.tolist()):
                o = int(offs[i])
                logp[o:o + L] = P[k]
                logq[o:o + L] = Q[k]

    U = rstart.size
    tasks = [(u, order[bounds[u]:bounds[u + 1]]) for u in range(U)
             if bounds[u + 1] > bounds[u]]
    if total >= _ATOMS_THREADED and total >= _ATOMS_PER_SLICE * U and parallel():
        # Large slices (the certified pair's ~1e6 atoms, the ranking's ~1e5): two lists of
        # work with about half the atoms each, on two threads (numpy's logaddexp releases
        # the GIL); a slice's cells are split where there are few slices. Every atom is
        # computed by the same elementwise operations and written to its own place.
        if len(tasks) < 8:
            tasks = [(u, part) for u, cells in tasks
                     for part in (cells[:(cells.size + 1) // 2], cells[(cells.size + 1) // 2:])
                     if part.size]
        load = np.cumsum([0] + [int(counts[int(c[0])]) * c.size for _, c in tasks])
        mid = int(np.argmin(np.abs(load - 0.5 * load[-1])))      # tasks[:mid]: ~half
        pmap(fill, [tasks[:mid], tasks[mid:]])
    else:
        fill(tasks)
    return logp, logq


#: Atoms (in all, and per distinct slice) from which ``_atoms_grouped`` works on two threads.
_ATOMS_THREADED = 40_000
_ATOMS_PER_SLICE = 2_000


def _x_windows(c):
    """Each cell's x window [alo, ahi] of ``hidden_atoms``: Bin(c, ½) ± ``_X_SDS``/2·√c
    (+ 3), clipped to [0, c] (its atoms are x = alo … ahi + 1)."""
    cf = c.astype(float)
    half = np.floor(0.5 * _X_SDS * np.sqrt(np.maximum(cf, 1.0))) + 3
    alo = np.maximum(0, np.floor(0.5 * cf - half)).astype(np.int64)
    ahi = np.minimum(c, np.ceil(0.5 * cf + half)).astype(np.int64)
    return alo, ahi


@functools.lru_cache(maxsize=4)
def hidden_atoms(hp: HiddenPair, budget: int = ATOM_BUDGET, ranking: bool | str = False):
    """(logp, logq, tail per cell, largest loss per cell): atoms of the dominating pair;
    the tails are the P-mass of each cell left out of its x window (Hoeffding).
    ``ranking`` as in ``hidden_cells``; with ``SAMPLED`` one block's large slices keep
    every (σ_x/64)-th x (``_lattice_atoms``)."""
    cl = hidden_cells(hp, budget, ranking)
    c = cl.c
    cf = c.astype(float)
    alo, ahi = _x_windows(c)
    # Hoeffding for the Bin(c, ½) mass below alo and above ahi (the victim adds 0 or 1).
    with np.errstate(divide="ignore", over="ignore"):
        u_lo = 0.5 * cf - alo + 1.0
        u_hi = ahi + 1.0 - 0.5 * cf
        t_lo = np.where(alo > 0, np.exp(-2.0 * u_lo ** 2 / np.maximum(cf, 1.0)), 0.0)
        t_hi = np.where(ahi < c, np.exp(-2.0 * u_hi ** 2 / np.maximum(cf, 1.0)), 0.0)
    tail_cell = cl.w * (t_lo + t_hi)
    if (ranking == SAMPLED and c.size and float(c.min()) >= _LATTICE_MIN_C
            and int(c.min()) == int(c.max())):
        # one block (the cells of ``_checkin_sampled_rows``): its few large slices' x
        # windows on a lattice too
        logp, logq = _lattice_atoms(cl, alo, ahi)
        return _with_extra_atoms(hp, cl, logp, logq, tail_cell)
    # One run of log Bin(c, ½) per distinct c (cells of a block share it), x from
    # max(alo − 1, 0) to ahi + 1; each cell reads x and x − 1 from its run.
    uc, first, inv = np.unique(c, return_index=True, return_inverse=True)
    r0 = np.maximum(alo[first] - 1, 0)
    rlen = ahi[first] + 2 - r0
    run = half_binom_logpmf_runs(uc.astype(float), r0.astype(float), rlen)
    rstart = np.cumsum(rlen) - rlen
    counts = ahi + 2 - alo
    if uc.size <= (_GROUPED_SLICES_RANKING if ranking else _GROUPED_SLICES):
        room = _extra_count(cl)
        logp, logq = _atoms_grouped(cl, run, rstart, r0, alo, counts, inv, room)
        return _with_extra_atoms(hp, cl, logp, logq, tail_cell, room)
    else:
        total = int(counts.sum())
        jj = np.repeat(np.arange(c.size), counts)
        offs = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        x = alo[jj] + offs
        base = (rstart[inv] - r0[inv])[jj]
        lv = run[base + x]
        iu = base + x - 1
        lu = np.where(x - 1 >= r0[inv][jj], run[np.maximum(iu, 0)], -np.inf)
        la = np.log(cl.alpha)[jj]
        lb = np.log(cl.beta)[jj]
        with np.errstate(divide="ignore"):
            lw = np.log(cl.w)[jj]
        logp = lw + np.logaddexp(la + lu, lb + lv)
        logq = lw + np.logaddexp(lb + lu, la + lv)
    return _with_extra_atoms(hp, cl, logp, logq, tail_cell)


#: x per standard deviation of a slice's Bin(c, ½) that ``SAMPLED`` ranking's atoms keep
#: (``_lattice_atoms``), and the smallest slice where that skips any (h ≥ 2).
_ATOM_LATTICE_PER_SD = 64.0
_LATTICE_MIN_C = 4 * (2 * _ATOM_LATTICE_PER_SD) ** 2


def _lattice_atoms(cl, alo, ahi):
    """The atoms (log P, log Q) of ``hidden_atoms`` for ``SAMPLED`` ranking: each cell's x
    window read every h-th x, h = ⌊σ_x/64⌋ (σ_x = √c/2 the standard deviation of
    Bin(c, ½)), each atom carrying h times its mass, Loader's log-pmf at each x. The
    ranking reads the atoms only through the quick Rényi sums Σ_x P(x)·expm1(aℓ(x)), of a
    smooth summand over the x window. Those sums are differences of nearly equal halves
    (ℓ changes sign at the window's middle: Σ|t| is ~10⁴ times the sum at low orders), so
    they move by ~1e-9 relative whenever the atoms' last bits do: with every x but
    Loader's form instead of the runs' recurrence, 4e-10; with this lattice, ≤ 2e-9
    (measured at 10¹⁰ users, where it keeps 1 atom in 24). The chosen ε0 was the same as
    with every x at every setting compared (tests/test_gaussian_sampling.py)."""
    c = cl.c
    cf = c.astype(float)
    h = np.maximum(1, np.floor(0.5 * np.sqrt(cf) / _ATOM_LATTICE_PER_SD)).astype(np.int64)
    counts = (ahi + 1 - alo) // h + 1                    # x = alo, alo + h, … ≤ ahi + 1
    total = int(counts.sum())
    jj = np.repeat(np.arange(c.size), counts)
    offs = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    x = (alo[jj] + offs * h[jj]).astype(float)
    cj = cf[jj]
    lv = half_binom_logpmf(x, cj)
    lu = half_binom_logpmf(x - 1.0, cj)
    la = np.log(cl.alpha)[jj]
    lb = np.log(cl.beta)[jj]
    with np.errstate(divide="ignore"):
        lw = np.log(cl.w * h)[jj]
    return lw + np.logaddexp(la + lu, lb + lv), lw + np.logaddexp(lb + lu, la + lv)


def _extra_count(cl) -> int:
    """Atoms ``_with_extra_atoms`` appends: the charged worst cell (2) and the s = 0 cell."""
    return (2 if cl.worst > 0 else 0) + (1 if cl.zero > 0 else 0)


def _with_extra_atoms(hp, cl, logp, logq, tail_cell, room: int = 0):
    """``hidden_atoms``' result from the cells' atoms: the charged worst cell and the s = 0
    cell added, atoms of mass 0 under both laws dropped. ``room``: the arrays already end
    with that many free places for them (``_extra_count``; no copy of ~10⁶ atoms)."""
    c = cl.c
    extra_p, extra_q = [], []
    if cl.worst > 0:
        lw0 = math.log(cl.worst)
        a0, b0 = hp.bias.log_alpha, hp.bias.log_beta
        extra_p += [lw0 + b0, lw0 + a0]
        extra_q += [lw0 + a0, lw0 + b0]
    if cl.zero > 0:
        extra_p.append(math.log(cl.zero))
        extra_q.append(math.log(cl.zero))
    if room:
        assert room == len(extra_p)
        logp[-room:] = extra_p
        logq[-room:] = extra_q
    elif extra_p:
        logp = np.concatenate([logp, extra_p])
        logq = np.concatenate([logq, extra_q])
    keep = np.isfinite(logp) | np.isfinite(logq)
    if not keep.all():               # (usually every atom has mass: no copies then)
        logp, logq = logp[keep], logq[keep]
    # Each cell's left-out x tail has losses within ±log(α_eff/(1 − α_eff)) of that cell.
    lmax_cell = np.log(cl.alpha) - np.log(cl.beta)
    return (logp, logq, tail_cell * (1.0 + 1e-12) + 1e-300 / max(c.size, 1), lmax_cell)


#: Atoms lighter than this (P and Q) are moved to the infinite-loss tail for PLD: they only
#: widen the loss range (and the FFT) without changing any δ above ~1e-25.
_PLD_DROP = 1e-28


def hidden_pld_atoms(hp: HiddenPair):
    """(log P, log Q, tail mass) of a finite dominating pair for PLD composition.

    The tail (x outside each slice's window, Hoeffding) is charged at infinite loss by the
    PLD route; the pair is symmetric, so the same bound serves Q.
    """
    logp, logq, tail_cell, _ = hidden_atoms(hp)
    light = (logp < math.log(_PLD_DROP)) & (logq < math.log(_PLD_DROP))
    keep = ~light

    def kept(i):
        # the two arrays' copies (and the dropped mass, with log P's) are independent:
        # side by side on two threads for the chosen ε0's ~10⁶ atoms, the same values
        if i:
            return logq[keep], 0.0
        return logp[keep], (float(np.exp(logp[light]).sum()) if np.any(light) else 0.0)

    if logp.size >= _PLD_THREADED and parallel():
        (lp, dropped), (lq, _) = pmap(kept, [0, 1])
    else:
        (lp, dropped), (lq, _) = kept(0), kept(1)
    return (lp, lq, float(tail_cell.sum()) * (1.0 + 1e-12) + dropped * (1.0 + 1e-9) + 1e-300)


#: Atoms from which ``hidden_pld_atoms`` copies its two arrays on two threads.
_PLD_THREADED = 100_000


def max_order(hp: HiddenPair) -> int:
    """Largest RDP order evaluated without overflow: (λ − 1)·log(α/(1 − α)) ≤ 600."""
    return int(max(2, min(4096, 600.0 / max(hp.log_ratio, 1e-12))))


def hidden_rdp(hp: HiddenPair, orders) -> np.ndarray:
    """D_λ(P ‖ Q) of the dominating pair at integer orders ≥ 2 (upper bounds, rounded up).

    E_P[e^{(λ−1)ℓ}] − 1 = Σ p·expm1((λ − 1)ℓ) over the atoms, with 1e-12 of the absolute
    sum charged for floating error and the left-out tail charged at the largest loss.
    """
    lam = np.asarray(orders, dtype=np.int64)
    _, _, tail_cell, lmax_cell = hidden_atoms(hp)
    pw, ell = _rdp_arrays(hp)
    out = np.empty(lam.shape, dtype=float)
    orders_list = lam.tolist()

    def part(idx):
        buf = np.empty_like(ell)
        for i in idx:
            a = float(orders_list[i] - 1)
            np.multiply(ell, a, out=buf)
            np.expm1(buf, out=buf)
            np.multiply(buf, pw, out=buf)
            g = float(buf.sum())
            g += 1e-12 * float(np.abs(buf, out=buf).sum())     # (in place: no 10 MB temporary)
            g += float(np.dot(tail_cell, np.expm1(np.minimum(a * lmax_cell, 700.0))))
            out[i] = math.log1p(max(g, 0.0)) / a

    k = len(orders_list)
    if k >= 2 and ell.size * k >= _RDP_THREADED and parallel():
        # Each order is its own passes over the atoms (~4 ms an order at 1.2e6 atoms; numpy
        # releases the GIL in them): the orders in two halves on two threads, each order's
        # value the same float as on one thread.
        pmap(part, [range(0, k // 2), range(k // 2, k)])
    else:
        part(range(k))
    return round_up(out)


@functools.lru_cache(maxsize=1)
def _rdp_arrays(hp: HiddenPair):
    """(e^{log P}, log P − log Q) of ``hidden_atoms(hp)``: the RDP route's order search
    calls ``hidden_rdp`` several times on one pair (two passes over ~1.2·10⁶ atoms each)."""
    logp, logq, _, _ = hidden_atoms(hp)
    return np.exp(logp), logp - logq


#: Atoms × orders from which ``hidden_rdp`` splits its orders over two threads.
_RDP_THREADED = 400_000


#: ``hidden_rdp_floor``: the floor pair merges atoms whose losses share a float exponent
#: and the top 6 bits of their mantissa (losses within 1/64 of each other, relative).
_FLOOR_SHIFT = 46
#: Relative error allowed to each atom mass exp(log P) as computed, against the exact mass
#: of the dominating cells (10× the sum of: the runs of log Bin(c, ½), 2e-13; log w, the
#: additions and ``logaddexp`` on values below 745 in magnitude, a few ulps each).
_ATOM_REL_ERR = 1e-11


#: ``_floor_pair`` first merges each cell's consecutive x in groups of this fraction of
#: the slice's standard deviation √c/2 (the loss moves by ~1/8 of its spread in a group).
_FLOOR_GROUP_SD = 1.0 / 8.0
#: Merged atoms lighter than this (under P or Q) are left out of the floor pair (their
#: P-mass joins the tails'): their float masses have no relative accuracy near underflow.
_FLOOR_MIN_MASS = 1e-290


def _floor_groups(hp: HiddenPair, cl: Cells, size: int):
    """Start index of each group of ``hidden_atoms``' atoms that ``_floor_pair`` merges:
    runs of consecutive x of one cell (the atoms are laid out cell by cell, each cell's
    window x = alo … ahi + 1, then the extra atoms, one group each); None when the layout
    is not that one (an atom of mass 0 under both laws was dropped)."""
    c = cl.c
    cf = c.astype(float)
    alo, ahi = _x_windows(c)
    counts = ahi + 2 - alo                           # as hidden_atoms forms them
    extra = _extra_count(cl)
    if int(counts.sum()) + extra != size:
        return None
    g = np.maximum(1, np.floor(0.5 * np.sqrt(np.maximum(cf, 1.0)) * _FLOOR_GROUP_SD)
                   ).astype(np.int64)
    ng = -(-counts // g)
    offs = np.cumsum(counts) - counts
    cell = np.repeat(np.arange(c.size), ng)
    within = np.arange(int(ng.sum())) - np.repeat(np.cumsum(ng) - ng, ng)
    starts = offs[cell] + within * g[cell]
    return np.concatenate([starts, np.arange(size - extra, size)]).astype(np.int64)


@functools.lru_cache(maxsize=4)
def _floor_pair(hp: HiddenPair):
    """The merged pair of ``hidden_rdp_floor``: (P, ℓ = log P − log Q) of its bins, the
    bound on each bin's relative mass error, on each loss's error, the P-mass left out
    (the windows' tails, Hoeffding, and the merged atoms below ``_FLOOR_MIN_MASS``) and an
    upper bound on M."""
    logp, logq, tail_cell, lmax_cell = hidden_atoms(hp)
    cl = hidden_cells(hp, ATOM_BUDGET, False)         # the cells of those atoms (cached)
    size = logp.size
    # (1) Each cell's consecutive x merged in groups (a post-processing): sums of a few
    # to a few hundred atoms, ~10⁵ groups from the 1.2·10⁶ atoms.
    starts = _floor_groups(hp, cl, size) if size else None
    if starts is None:
        starts = np.arange(size, dtype=np.int64)
    if size:
        # P and Q side by side (numpy's exp and reduceat release the GIL; ~2 ms each)
        P, Q = pmap(lambda lg: np.add.reduceat(np.exp(lg), starts), (logp, logq))
    else:
        P = Q = np.zeros(0)
    n_in = np.diff(np.append(starts, size))          # atoms summed in each group
    keep = (P >= _FLOOR_MIN_MASS) & (Q >= _FLOOR_MIN_MASS)
    left = float(np.sum(P[~keep])) * (1.0 + 1e-9) if not keep.all() else 0.0
    P, Q, n_in = P[keep], Q[keep], n_in[keep]
    # (2) The groups merged by loss (a post-processing again): the sign of ℓ and the bit
    # pattern of |ℓ| (at least 1e-14) shifted by _FLOOR_SHIFT — monotone in |ℓ|, so a bin
    # holds losses of one sign within a relative 2^-6 of each other (or all |ℓ| ≤ 1e-14).
    # A group's |ℓ| is at most its cell's log(α/β) (a ratio of two mixtures of the same
    # pair) or the pair's (the worst cell); a larger one (rounding) joins the top bin.
    ell = np.log(P) - np.log(Q)
    k0 = int(np.array([1e-14]).view(np.int64)[0] >> _FLOOR_SHIFT)
    top = max(float(hp.log_ratio), float(np.max(lmax_cell, initial=0.0)))
    nk = int(np.array([top]).view(np.int64)[0] >> _FLOOR_SHIFT) - k0 + 1
    mag = np.maximum(np.abs(ell), 1e-14)
    key = np.right_shift(mag.view(np.int64), _FLOOR_SHIFT) - k0
    np.minimum(key, nk - 1, out=key)
    key *= 2
    key += ell < 0.0
    PB = np.bincount(key, weights=P, minlength=2 * nk)
    QB = np.bincount(key, weights=Q, minlength=2 * nk)
    # roundings in a bin's mass: one per atom added (in its group, then the groups)
    adds = np.bincount(key, weights=n_in.astype(float), minlength=2 * nk)
    live = PB > 0.0
    PB, QB = PB[live], QB[live]
    lp, lq = np.log(PB), np.log(QB)
    rel = _ATOM_REL_ERR + float(np.max(adds, initial=0.0)) * 1.12e-16
    big = float(np.max(np.abs(lp), initial=0.0)) + float(np.max(np.abs(lq), initial=0.0))
    err_ell = 2.02 * rel + 4.5e-16 * big              # logs of P and Q, and their difference
    tail = float(np.sum(tail_cell)) * (1.0 + 1e-9) + left
    mass = (float(np.sum(cl.w)) + cl.zero + cl.worst) * (1.0 + 1e-12)
    return PB, lp - lq, rel, err_ell, tail, mass


#: Below this estimate of the pair's χ² (its Rényi sum at order 2, minus 1) the floor is
#: not built: its error allowances at order 2 (≥ 3·2.02·_ATOM_REL_ERR ≈ 6e-11) would
#: leave it at or below 0 there.
_FLOOR_MIN_CHI2 = 1e-10


def _chi2_estimate(hp: HiddenPair) -> float:
    """Σ_cells w·4γ²/(c + 1): each cell is the clone slice s = c + 1 with bias γ = α − β,
    whose χ² is at least 4γ²/s (``bounds.sampled.clone_d2_floor``) and close to it at the
    cells' sizes. Decides whether ``hidden_rdp_floor`` builds its merged pair."""
    cl = hidden_cells(hp, ATOM_BUDGET, False)
    g = np.asarray(cl.gamma, dtype=float)
    return float(np.sum(cl.w * 4.0 * g * g / (cl.c + 1.0))) + 4.0 * cl.worst


def _d2_floor(hp: HiddenPair) -> float:
    r"""A certified lower bound on D_2(Π) (Π as in ``hidden_rdp_floor``) in closed form,
    so on D_λ(Π) at every λ ≥ 2: half of log(1 + χ²) with χ² at least
    Σ_cells w·4γ²/(σ·s).

    A cell (c, α, β, w) is P = w·(α B_c(x − 1) + β B_c(x)) = w·B_s(x)(σ + γZ) with
    s = c + 1, σ = α + β, γ = α − β (the floats the atoms are built from), Z = (2x − s)/s.
    Its Rényi sum of order 2 is w·σ·E_B[(1 + gZ)²/(1 − gZ)] with g = γ/σ, at least
    w·σ·(1 + 4g²/s) (1/(1 − y) ≥ 1 + y, E Z = E Z³ = 0, E Z² = 1/s), and its mass is w·σ.
    So S_2 − M ≥ Σ w·4γ²/(σ s) (the other cells' terms are at least their masses), and
    D_2(Π) ≥ log(1 + that/max(M, 1)). Half of it is taken: the floor then stays far below
    the curve even where the curve's own float error is a sizeable part of a tiny D_2
    (~2e-11 at 10¹⁰ users and rate 0.0025)."""
    cl = hidden_cells(hp, ATOM_BUDGET, False)
    al = np.asarray(cl.alpha, dtype=float)
    be = np.asarray(cl.beta, dtype=float)
    g = al - be
    sig = al + be
    x = float(np.sum(cl.w * 4.0 * g * g / (sig * (cl.c + 1.0))))
    if cl.worst > 0.0:
        b = hp.bias
        gw = b.alpha - b.beta
        x += cl.worst * 4.0 * gw * gw / (b.alpha + b.beta)
    mass = (float(np.sum(cl.w)) + cl.zero + cl.worst) * (1.0 + 1e-12)
    return max(0.0, 0.5 * math.log1p(x / max(mass, 1.0)))


def hidden_rdp_floor(hp: HiddenPair, orders) -> np.ndarray:
    r"""Certified LOWER bounds on the exact D_λ of a pair whose divergences ``hidden_rdp``
    bounds from above, at real orders λ ≥ 2 (``RdpView.floor``: lets the RDP route be
    skipped where no order can beat a known value).

    The pair Π: the dominating cells (atoms and the windows' left-out tails, total mass M =
    Σw + zero + worst under P and Q) divided by M when M ≥ 1, or with an outcome of mass
    1 − M under both (loss 0) added when M < 1. ``hidden_rdp`` charges the atoms'
    Σ p·expm1((λ − 1)ℓ) and each tail at its cell's largest loss, so with S the cells' full
    Rényi sum (λ − 1)·hidden_rdp ≥ log(1 + S − M), which is at least D_λ(Π)·(λ − 1) either
    way ((1 + S − M) − S/M = (M − 1)(S/M − 1) ≥ 0 for M ≥ 1). Merging outcomes is a
    post-processing, so D_λ(Π) is at least that of the pair whose atoms are merged into
    bins of losses within a relative 2^-6 of each other (~10³ bins for the 1.2·10⁶ atoms;
    the same float exponent and top mantissa bits) and whose tails are merged into one
    outcome. Its Rényi sum minus 1 is at least (Σ_b P_b·expm1((λ − 1)ℓ_b) − τ)/max(M, 1)
    (τ the tails' P-mass; the tail outcome's own term is left out; divided by M only when
    non-negative). The bins' masses are float sums of the computed atoms: each within
    ``rel`` of the exact mass, each loss within ``err_ell``; the floor subtracts those
    errors' largest effect on every term (2·rel·|t_b| + 3(λ − 1)·err_ell·P_b·e^{(λ−1)ℓ_b})
    and 1e-12 of Σ|t_b| for the float sum. Within ~1e-5 relative of the curve at the
    benchmark's check-in questions (tests/test_hidden_rdp_floor.py checks it against
    ``hidden_rdp`` and an mpmath Rényi sum of the exact cells)."""
    lam = np.atleast_1d(np.asarray(orders, dtype=float))
    if lam.size == 0:
        return np.zeros(lam.shape)
    # D_λ(Π) ≥ D_2(Π) ≥ _d2_floor at every λ ≥ 2 (the exact D is non-decreasing)
    low = np.where(lam >= 2.0, _d2_floor(hp), 0.0)
    if _chi2_estimate(hp) < _FLOOR_MIN_CHI2:
        # The merged pair's floor at order 2 would be at most ~0 (its allowances are ~6e-11
        # of the sum there): not built (~5 ms); the closed form's constant floor is enough
        # to rule out the conversion's ε = 0 and let the conversion term alone decide.
        return low
    P, ell, rel, err_ell, tail, mass = _floor_pair(hp)
    if P.size == 0:
        return low
    sum_p = float(np.sum(P))
    a = lam - 1.0
    out = np.zeros(lam.shape)
    rows = max(1, min(64, (1 << 16) // max(P.size, 1)))
    for i in range(0, lam.size, rows):
        x = a[i:i + rows, None]
        t = np.multiply(x, ell[None, :])
        np.minimum(t, 700.0, out=t)                  # (only lowers a term)
        np.expm1(t, out=t)
        t *= P[None, :]
        s_t = np.sum(t, axis=1)
        s_abs = np.sum(np.abs(t), axis=1)
        g = (s_t - (2.0 * rel + 1e-12) * s_abs - 3.0 * x[:, 0] * err_ell * (s_t + sum_p)
             - tail)
        g = np.where(g > 0.0, g / max(mass, 1.0) * (1.0 - 1e-12), g)
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.log1p(np.maximum(g, -0.5)) / x[:, 0]
        d = np.where(g > 0.0, d * (1.0 - 1e-12), d * (1.0 + 1e-12))
        # orders whose loss error allowance is not small (or λ ≤ 1): no claim
        bad = ~(x[:, 0] > 0.0) | (x[:, 0] * err_ell > 0.01) | ~np.isfinite(d)
        out[i:i + rows] = np.where(bad, 0.0, d)
    return np.maximum(out, low)


def mixture_rdp(gamma: float, lam, eps_lam) -> np.ndarray:
    """RDP of "take part w.p. γ, else send nothing" for a mechanism with RDP ε(λ).

    ⊥ is an atom private to the victim, the same under both datasets, so
    E_Q[(P/Q)^λ] = 1 − γ + γ e^{(λ−1)ε(λ)} (valid without any shuffle; replacement
    adjacency). Computed as log1p(γ·expm1(x))/(λ − 1), or in log form for large x.
    """
    lam = np.asarray(lam, dtype=float)
    x = (lam - 1.0) * np.asarray(eps_lam, dtype=float)
    if gamma >= 1.0:
        return np.asarray(eps_lam, dtype=float)
    small = x < 30.0
    out = np.empty(x.shape)
    out[small] = np.log1p(gamma * np.expm1(x[small]))
    xb = x[~small]
    out[~small] = xb + math.log(gamma) + np.log1p((1.0 - gamma) / gamma * np.exp(-xb))
    return out / (lam - 1.0)
