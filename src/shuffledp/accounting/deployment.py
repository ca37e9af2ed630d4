"""Deployments as they run: several reports per user, dummy reports, colluding users.

A ``Shuffle`` with ``reports_per_user``, ``dummies`` or ``honest`` set is answered by
*reductions* to plain single-report protocols that the bounds already answer: each
``Reduction`` names plain protocols and how many times each is composed per round, and why
the deployment is a post-processing of (or equal to) them. The accountant asks every valid
reduction and answers with the smallest certified upper bound, every candidate labelled by
its reduction (docs/deployments.md has the arguments and worked examples).

The arguments, for replace-one neighbours (the victim's whole data replaced):

* **honest = h** — the adversary knows the n − h colluders' inputs and reports; the view
  (all n reports shuffled, the colluders' reports) is in one-to-one correspondence with
  (the h honest reports shuffled, the colluders' reports), and the colluders' reports are
  independent of the honest data. So the deployment leaks exactly what ``Shuffle(R, h)``
  leaks on the honest users' data, and every bound (a supremum over the h − 1 honest
  others' inputs) holds: upper and lower bounds alike.
* **dummies = D** (no sampling) — a dummy report is the mechanism on a public input: a
  user whose input is fixed. The deployment on (data, dummy inputs) is ``Shuffle(R, n+D)``
  on a dataset of n + D users; its upper bounds hold for every dataset, hence for every
  choice of dummy inputs (the clone reduction: D more users who may be clones; the
  blanket: D more blanket draws). A lower bound of ``Shuffle(R, n+D)`` is what the worst
  choice of dummy inputs leaks, not a lower bound for a given choice. With sampling the
  dummies are not sampled and the sampled bounds do not count always-present reports;
  the deployment is a post-processing of the round without dummies (the shuffler could add
  them itself), and that is the bound given.
* **dummy_distribution = ν** — each dummy drawn from a public ν over the outputs. When ν
  is a mixture Σπ_x R(x) of the rows (checked exactly for k-RR), a dummy is a dummy on a
  random public input x ~ π: the deployment's pair of output laws is the π-mixture of the
  fixed-input pairs, and the hockey-stick divergence is jointly convex, so every
  fixed-input bound holds (its lower bounds do not: they are for the worst fixed inputs).
  Otherwise the dummies are not counted as users (post-processing, as with sampling). One
  round of a concrete randomizer (k = 1, no sampling) also gets the direct blanket bound of
  ``shuffledp.pairs.dummy_blanket``: a dummy is a blanket draw with probability min_y ν(y)/ω(y).
* **reports_per_user = k** — (a) the joint shuffle of the k·n reports is a post-processing
  of k separate single-report shuffles (merge the k multisets), so the k-fold adaptive
  composition of ``Shuffle(R, n)`` holds (rounds × k); not with sampling: the k
  sub-shuffles would share one participation draw, which composition does not allow.
  (b) the user's k-tuple is one report of the product randomizer, kε0-LDP (for the
  Gaussian: the same σ over a diameter √k, i.e. ``Gaussian(σ/√k)`` per unit diameter); the
  tuple-level shuffle flattened is the joint shuffle, so ``Shuffle(LDP(k·ε0), n)`` holds,
  with the same sampling. D dummies add ⌊D/k⌋ users to either route (dummies split into
  groups or packed into tuples; the rest added by post-processing).

Reductions chain: honest first (n → h), then dummies, then k.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace


from ..core.errors import NotApplicableError
from ..core.mechanisms import LDP, Gaussian
from ..core.protocols import Shuffle, WithoutReplacement
from ..core.views import EpsilonAt

__all__ = ["Reduction", "reductions", "refusals", "plan", "label_for", "direct_dummies"]


@dataclass(frozen=True)
class Reduction:
    """A deployment mapped to plain single-report protocols.

    ``parts``: ((plain protocol, rounds multiplier), ...): one round of the deployment is
    (ε, δ)-bounded by the adaptive composition of ``multiplier`` rounds of each protocol.
    ``valid_for``: what the answer holds for (h honest users, D dummies, k reports);
    ``reason``: the argument. ``lower``: what a lower bound of the plain protocol means for
    the deployment, or None when it means nothing (the reduction is only an upper bound).
    """

    label: str
    parts: tuple
    valid_for: str
    reason: str
    lower: str | None = None

    @property
    def protocol(self) -> Shuffle:
        return self.parts[0][0]

    @property
    def multiplier(self) -> int:
        return self.parts[0][1]


def _honest(proto: Shuffle) -> int:
    return proto.n if proto.honest is None else proto.honest


def _product_mechanism(mech, k: int):
    """The k-fold product randomizer's class: LDP(k·ε0), or the Gaussian with σ/√k per unit
    diameter (k vectors each moving by ≤ 1 move the tuple by ≤ √k in ℓ2)."""
    if isinstance(mech, Gaussian):
        return Gaussian(mech.sigma / math.sqrt(k))
    return LDP(k * mech.eps0)


def plan(proto: Shuffle) -> tuple[list[Reduction], list[tuple[str, str]]]:
    """(valid reductions of ``proto``, [(route, why it is not offered)])."""
    if not isinstance(proto, Shuffle):
        raise ValueError(f"protocol must be a Shuffle(...); got {proto!r}")
    mech, samp, k, D = proto.mechanism, proto.sampling, proto.reports_per_user, proto.dummies
    h = _honest(proto)
    refused: list[tuple[str, str]] = []
    what, steps = [], []
    if h != proto.n:
        if isinstance(samp, WithoutReplacement):
            return [], [("honest", "honest < n with sampling without replacement: the number "
                         "of honest users sampled is random (hypergeometric), so no single plain "
                         "protocol describes the honest part; use CheckIn sampling or no "
                         "sampling")]
        what.append(f"{h} honest users of n = {proto.n} (the {proto.n - h} others collude and "
                    "their reports are known)")
        steps.append(f"honest: the n − h = {proto.n - h} colluders' reports are known and "
                     f"subtracted; what is left is the shuffle of the h = {h} honest users' "
                     "reports, whose bounds hold for any inputs of the h − 1 honest others")
    extra = 0
    lower = "a lower bound for these h honest users" if h != proto.n else "a lower bound"
    dist = proto.dummy_distribution
    counted = bool(D) and samp is None
    if D:
        what.append(f"D = {D} dummy reports on public inputs (any choice)" if dist is None
                    else f"D = {D} dummy reports drawn from {_dist_text(dist)}")
        if samp is None and dist is not None and not _in_row_hull(mech, dist):
            counted = False
            why = (f"{_dist_text(dist)} is not checked to be a mixture of the mechanism's "
                   "output distributions (checked exactly for k-ary randomized response "
                   "only), so a dummy drawn from it is not known to be a user with some "
                   "public input; the dummies are not counted as users (the round without "
                   "them bounds it: the shuffler could add them itself)")
            steps.append(f"dummies: not counted as users: {why}")
            refused.append(("dummies", why))
            lower = None
        elif samp is None and dist is not None:
            extra = D
            steps.append(f"dummies: each of the {D} dummies drawn from {_dist_text(dist)}, a "
                         "mixture of the mechanism's rows, is a user with a random public "
                         "input; bounds valid for any fixed inputs of the others hold for the "
                         "mixture (joint convexity of the hockey-stick divergence)")
            lower = None
        elif samp is None:
            extra = D
            steps.append(f"dummies: the {D} dummy reports are users with fixed public inputs; "
                         "bounds valid for any inputs of the others count them as others")
            lower = "a lower bound for the worst choice of dummy inputs"
        else:
            steps.append(f"dummies: not counted: with sampling the {D} always-present dummies "
                         "are not users of a sampled round; the round without dummies bounds "
                         "it (the shuffler could add them itself: post-processing)")
            refused.append(("dummies", "with sampling the always-present dummies are not "
                            "counted (no valid argument counts them among sampled users); "
                            "the bound is that of the round without dummies"))
            lower = None
    if k == 1:
        p = Shuffle(mech, h + extra, sampling=samp)
        label = "+".join(x for x, on in (("honest", h != proto.n),
                                          ("dummies" if counted else "dummies-not-counted",
                                           D)) if on)
        return [Reduction(label, ((p, 1),), "; ".join(what), "; ".join(steps), lower)], refused
    what.append(f"k = {k} reports per user (same value or k values of the user)")
    per = D // k if counted else 0
    reds = []
    if samp is None:
        steps_a = steps + [f"k-fold: the joint shuffle of the {k} reports per user is a "
                           f"post-processing of {k} single-report shuffles (merge the multisets), "
                           f"so {k}-fold adaptive composition holds"
                           + (f"; the {D} dummies split into {k} groups of at least {per}"
                              if D else "")]
        reds.append(Reduction("k-fold", ((Shuffle(mech, h + per), k),), "; ".join(what),
                              "; ".join(steps_a), None))
    else:
        refused.append(("k-fold", f"with sampling the {k} sub-shuffles share one participation "
                        "draw, so they are not independent rounds and their composition is "
                        "not a bound; the product route answers"))
    try:
        pm = _product_mechanism(mech, k)
    except ValueError as exc:
        refused.append(("product", f"the product randomizer is outside the library's range: {exc}"))
    else:
        unit = ("the Gaussian with sigma/sqrt(k) per unit diameter" if isinstance(mech, Gaussian)
                else f"a {k}x{mech.eps0:g} = {k * mech.eps0:g}-LDP randomizer")
        steps_b = steps + [f"product: each user's {k}-tuple is one report of the product "
                           f"randomizer ({unit}); the tuple shuffle, flattened, is the joint "
                           "shuffle" + (f"; the {D} dummies packed into {per} tuples" if per
                                        else "")]
        reds.append(Reduction("product", ((Shuffle(pm, h + per, sampling=samp), 1),),
                              "; ".join(what), "; ".join(steps_b), None))
    if h != proto.n:
        reds = [replace(r, label="honest+" + r.label) for r in reds]
    return reds, refused


def _dist_text(dist) -> str:
    if isinstance(dist, str):
        return f"the {dist} distribution over the outputs"
    if len(dist) <= 6:
        return "the distribution (" + ", ".join(f"{x:g}" for x in dist) + ") over the outputs"
    return (f"a given distribution over the {len(dist)} outputs (probabilities "
            f"{min(dist):g} to {max(dist):g})")


def _in_row_hull(mech, dist) -> bool:
    from ..pairs.dummy_blanket import in_row_hull
    return in_row_hull(mech, dist)


def direct_dummies(proto: Shuffle, q, rounds, bound, relation):
    """(the candidate of the direct blanket bound with dummies drawn from a public
    distribution, or None; why it is not offered, or None). ``shuffledp.pairs.dummy_blanket``;
    the selection loop offers it beside the reductions' candidates (``q``: the question,
    an ``EpsilonAt`` / ``DeltaAt``)."""
    import time
    from ..pairs import gparv
    from ..core.relations import relation as _relation
    dist = proto.dummy_distribution
    if dist is None or not proto.dummies:
        return None, None
    why = None
    if proto.reports_per_user != 1:
        why = "several reports per user (the direct bound is for one report per user)"
    elif proto.sampling is not None:
        why = "sampling (the dummies are always present, the users are not)"
    elif not gparv.has_pairs(proto.mechanism):
        why = "the mechanism has no known blanket (a concrete randomizer is needed)"
    elif _relation(relation) != "replace_one":
        why = "add/remove neighbours (the bound is for replace-one neighbours)"
    elif rounds != 1:
        why = (f"T = {rounds} rounds (one round only: its PLD/RDP views are not built; the "
               "other routes compose)")
    elif bound not in (None, "blanket"):
        why = f"bound {bound!r} was asked for"
    if why is not None:
        return None, ("dummies-blanket", f"the direct blanket bound with dummies drawn from "
                      f"{_dist_text(dist)} is not offered: {why}")
    from ..pairs import dummy_blanket as db
    from ..core.results import Candidate
    mech, h, D = proto.mechanism, _honest(proto), proto.dummies
    c = db.blanket_weight(mech, dist)
    if c <= 0.0:
        return None, ("dummies-blanket", f"{_dist_text(dist)} gives the blanket no mass "
                      "(min_y nu(y)/omega(y) = 0): the dummies add no blanket draw")
    t0 = time.perf_counter()
    if q.solves == "epsilon":
        eps, delta = db.epsilon(mech, h, D, c, q.delta), q.delta
    else:
        eps, delta = q.epsilon, db.delta(mech, h, D, c, q.epsilon)
    vf = (f"this randomizer ({mech.describe()}), one round, replace-one neighbours; "
          f"deployment: {h} honest users and D = {D} dummy reports drawn from "
          f"{_dist_text(dist)}, each a blanket draw with probability {c:.6g} "
          "(reduction 'dummies-blanket', docs/dummies.md)")
    return Candidate("dummies-blanket", "upper", vf, float(eps), float(delta),
                     time.perf_counter() - t0, composition="none",
                     details={"blanket_weight_of_a_dummy": c, "honest": h, "dummies": D},
                     scope="this-randomizer", question=q.solves), None


def reductions(proto: Shuffle) -> list[Reduction]:
    """The valid reductions of a deployment to plain single-report protocols (a plain
    protocol reduces to itself)."""
    if not proto.is_deployment:
        return [Reduction("plain", ((proto, 1),), "", "", "a lower bound")]
    reds, refused = plan(proto)
    if not reds:
        raise NotApplicableError(f"no reduction applies to {proto.describe()}: "
                                 + "; ".join(f"{r}: {w}" for r, w in refused))
    return reds


def refusals(proto: Shuffle) -> list[tuple[str, str]]:
    """[(route, why it is not offered)] for a deployment."""
    return plan(proto)[1] if proto.is_deployment else []


def label_for(red: Reduction, text: str) -> str:
    """``text`` (what an answer holds for) with the deployment and the reduction named."""
    return f"{text}; deployment: {red.valid_for} (reduction {red.label!r})"


# ---------------------------------------------------------------------------------------
# The ledger's entry points (a one-protocol question and its RDP curve go through the
# selection loop, shuffledp.accounting.select, which takes the reductions as its outer candidates).
# ---------------------------------------------------------------------------------------
#: At most this many combinations of reductions are tried in one ledger (each entry's
#: routes multiply).
MAX_COMBINATIONS = 16


def ledger_ask(acc, q):
    """Ledger.Accountant._ask with deployment entries: each combination of the entries'
    reductions is a plain ledger; the answer is the smallest, every combination shown."""
    entries = list(acc.entries)
    choices = [reductions(e.item) if e.is_shuffle and e.item.is_deployment else [None]
               for e in entries]
    combos = list(itertools.product(*choices))
    if len(combos) > MAX_COMBINATIONS:
        # Keep the first route of every entry fixed beyond the cap (all still valid).
        combos = combos[:MAX_COMBINATIONS]
    outs, rows = [], []
    for combo in combos:
        sub = _reduced_ledger(acc, combo)
        tag = "+".join(red.label for red in combo if red is not None)
        try:
            r = sub._ask(q)
        except NotApplicableError as exc:
            rows.append((f"[{tag}]", None, str(exc), 0.0))
            continue
        rows += [(f"[{tag}] {n}", val, why, s) for n, val, why, s in r.composers]
        if len(r.entries) == len(entries):
            # One line per entry as composed (each entry maps to one plain entry): say
            # which reduction answered it and that the number is for the deployment.
            r = replace(r, entries=tuple(
                en if red is None else replace(en, bound=f"{red.label}/{en.bound}",
                                               valid_for=label_for(red, en.valid_for))
                for en, red in zip(r.entries, combo)))
            r = replace(r, valid_for=" AND ".join(dict.fromkeys(en.valid_for
                                                                for en in r.entries)))
        outs.append(r)
    if not outs:
        raise NotApplicableError("no combination of the deployment reductions could be "
                                 "composed: " + "; ".join(f"{n}: {w}" for n, _, w, _ in rows))
    best = min(outs, key=float)
    return replace(best, composers=tuple(rows))


def _best_reduction(plain_ask, proto: Shuffle, rounds: int, relation: str) -> Reduction:
    """The reduction whose answer at δ = 1e-6 is smallest (every reduction is valid; this
    only picks the usually tightest one where a single plain protocol is needed);
    ``plain_ask`` is accountant.ask_protocol (passed in: this module sits below it)."""
    r = plain_ask(proto, EpsilonAt(1e-6), rounds, upper_only=True, relation=relation)
    label = r.bound.split("/")[0]
    return next(red for red in reductions(proto) if red.label == label)


def plain_ledger(acc, plain_ask):
    """The ledger with each deployment entry replaced by its best reduction (a valid plain
    ledger: for ``to_dp_accounting``, which needs one dominating pair per entry)."""
    return _reduced_ledger(acc, [_best_reduction(plain_ask, e.item, e.rounds, acc.relation)
                                 if e.is_shuffle and e.item.is_deployment else None
                                 for e in acc.entries])


def _reduced_ledger(acc, combo):
    """The plain ledger of ``acc`` with entry i replaced by the parts of reduction
    ``combo[i]`` (None: the entry as it is), each part composed rounds × its multiplier
    times and labelled with the reduction it comes from. ``type(acc)`` builds it (the
    ledger class, passed in: no import of ledger here)."""
    out = type(acc)(pld_discretization=acc.pld_discretization, answer_only=acc.answer_only,
                    relation=acc.relation)
    for e, red in zip(acc.entries, combo):
        if red is None:
            out.compose(e.item, e.rounds, label=e.label)
            continue
        for p, mult in red.parts:
            out.compose(p, e.rounds * mult,
                        label=f"{e.label} [reduction {red.label}: {p.describe()}]")
    return out


def valid_for(proto: Shuffle, plain_valid_for) -> str:
    """What an RDP answer for a deployment entry holds for (the ledger's static label);
    ``plain_valid_for(protocol)`` is that label for a plain protocol."""
    # The same choice as a plain entry's (the shortest, i.e. narrowest, class text), over
    # the reductions: a pointwise minimum holds only for the narrowest class among them.
    vf, red = min(((plain_valid_for(red.protocol), red)
                   for red in reductions(proto)), key=lambda t: len(t[0]))
    return label_for(red, vf)
