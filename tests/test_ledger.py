"""The ledger (sd.Accountant), the composers registry, central events and interop.

Independent checks: exact enumeration of the shuffled histograms at n = 3 (two
heterogeneous rounds), dp_accounting's own accountants for central events, closed forms
(Laplace hockey-stick, Gaussian RDP), numerical integration (Laplace RDP).
"""

import itertools
import json
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats

import oracle
import shuffledp as sd
from shuffledp import compose as composers
from shuffledp.compose import composition as comp
from shuffledp.core.errors import NotApplicableError

needs_pld = pytest.mark.skipif(comp.pld_unavailable_reason() is not None,
                               reason="dp-accounting (the pld extra) is not installed")


# ------------------------------------------------------------------------------------------
# registry and one-entry ledger
# ------------------------------------------------------------------------------------------
def test_registry_order_and_errors():
    assert composers.ids()[:4] == ["none", "rdp", "kov15", "pld"]
    with pytest.raises(ValueError, match="composition must be one of"):
        composers.get("nope")


GRID = [(sd.Shuffle(sd.LDP(1.0), n=1000), 1), (sd.Shuffle(sd.LDP(1.0), n=1000), 4),
        (sd.Shuffle(sd.RandomizedResponse(2.0, k=3), n=500), 1),
        (sd.Shuffle(sd.LDP(0.5), n=200, sampling=sd.CheckIn(0.5)), 2)]


@pytest.mark.parametrize("proto,T", GRID)
def test_one_entry_ledger_equals_sd_epsilon(proto, T):
    r = sd.epsilon(proto, 1e-6, rounds=T)
    lr = sd.Accountant().compose(proto, T).epsilon(1e-6)
    assert lr.epsilon == r.epsilon and lr.composition == r.composition
    assert lr.entries[0].bound == r.bound and lr.kind == "upper"
    d = sd.delta(proto, r.epsilon * 1.2, rounds=T)
    assert sd.Accountant().compose(proto, T).delta(r.epsilon * 1.2).delta == d.delta


def test_bad_input_names_the_parameter():
    acc = sd.Accountant()
    with pytest.raises(ValueError, match="rounds"):
        acc.compose(sd.Shuffle(sd.LDP(1.0), n=10), rounds=0)
    with pytest.raises(ValueError, match="item must be"):
        acc.compose("ldp", 1)
    with pytest.raises(ValueError, match="empty"):
        acc.epsilon(1e-6)
    acc.compose(sd.Shuffle(sd.LDP(1.0), n=10), 1)
    with pytest.raises(ValueError, match="delta"):
        acc.epsilon(1.5)


# ------------------------------------------------------------------------------------------
# composition properties on several entries
# ------------------------------------------------------------------------------------------
P1 = sd.Shuffle(sd.LDP(1.0), n=2000)


@needs_pld
def test_split_rounds_equal_one_entry_within_discretisation():
    one = sd.Accountant().compose(P1, 5).epsilon(1e-6)
    two = sd.Accountant().compose(P1, 2).compose(P1, 3).epsilon(1e-6)
    pld = dict((n, v) for n, v, _, _ in two.composers)["pld"]
    bias = two.details.get("eps_bias_bound", 5 * 2e-4) if two.composition == "pld" else 5 * 2e-4
    assert abs(pld - one.epsilon) <= bias + 1e-6
    # the same parts through the PLD composer on one grid: convolution is associative
    vw = sd.bounds.get("fmt20").views(P1)
    c = composers.get("pld")
    a = c.epsilon([(vw, 2), (vw, 3)], 1e-6, discretization=1e-4).value
    b = c.epsilon([(vw, 5)], 1e-6, discretization=1e-4).value
    assert abs(a - b) <= 1e-6 * max(a, b) + 1e-9


def test_split_entries_equal_one_entry_ldp():
    # issue 28: 4 + 6 rounds were composed as two entries on the ledger's PLD grid (0.182905)
    # while 10 rounds of the one entry got the certified pair composition (0.181915).
    p = sd.Shuffle(sd.LDP(1.0), n=10_000)
    one = sd.epsilon(p, 1e-6, rounds=10)
    split = sd.Accountant().compose(p, 4).compose(p, 6).epsilon(1e-6)
    assert split.epsilon == one.epsilon and split.composition == one.composition
    assert [(e.rounds, e.bound) for e in split.entries] == [(4, one.bound), (6, one.bound)]
    assert [e.share for e in split.entries] == [0.4, 0.6]
    dl = sd.Accountant().compose(p, 4).compose(p, 6).delta(one.epsilon)
    assert dl.delta == sd.delta(p, one.epsilon, rounds=10).delta


def _pair_delta_exact(lp, lq, T, eps):
    """δ(ε) of the T-fold product of a dominating pair, both directions, by enumeration."""
    P = [mp.exp(mp.mpf(float(x))) for x in lp]
    Q = [mp.exp(mp.mpf(float(x))) for x in lq]
    return max(oracle.product_hockey(P, Q, T, eps), oracle.product_hockey(Q, P, T, eps))


def test_split_entries_equal_one_entry_sampled_rr():
    # issue 28: here the two entries were *smaller* (8.0681, the ledger's fine PLD grid) than
    # the one entry (8.0926, the pair engine's default grid of 0.033, coarse for a six-atom
    # pair). Both must now give the same value, at or below both, and still valid: checked
    # against the exact 5-fold composition of the same pair (enumeration, mpmath).
    p = sd.Shuffle(sd.RandomizedResponse(2.0), n=3, sampling=sd.WithoutReplacement(2))
    one = sd.epsilon(p, 1e-6, rounds=5)
    split = sd.Accountant().compose(p, 2).compose(p, 3).epsilon(1e-6)
    assert split.epsilon == one.epsilon
    lp, lq, tail = sd.bounds.get(one.bound).pld_atoms(p)
    assert tail < 1e-200 and len(lp) <= 8
    assert _pair_delta_exact(lp, lq, 5, one.epsilon) <= 1e-6             # valid
    assert _pair_delta_exact(lp, lq, 5, one.epsilon - 2e-3) > 1e-6       # and within 2e-3
    d_one = sd.delta(p, 8.0, rounds=5).delta
    d_split = sd.Accountant().compose(p, 2).compose(p, 3).delta(8.0).delta
    assert d_split == d_one and d_one >= float(_pair_delta_exact(lp, lq, 5, 8.0))
    assert d_one <= float(_pair_delta_exact(lp, lq, 5, 8.0)) * 1.01


def test_composers_merge_a_repeated_view():
    # The same view listed as 2 and 3 rounds is 5 rounds of it, for every composer.
    p = sd.Shuffle(sd.RandomizedResponse(2.0, k=3), n=200)
    vw = sd.bounds.get("fmt23").views(p)
    assert composers.merge_parts([(vw, 2), (vw, 3)]) == [(vw, 5)]
    other = sd.bounds.get("fmt20").views(p)
    assert composers.merge_parts([(vw, 2), (other, 1), (vw, 3)]) == [(vw, 5), (other, 1)]


@pytest.mark.slow
@needs_pld
def test_ledger_between_largest_part_and_basic_composition():
    pa, pb = sd.Shuffle(sd.LDP(1.0), n=2000), sd.Shuffle(sd.RandomizedResponse(2.0, k=3), n=1000)
    delta = 1e-6
    r = sd.Accountant().compose(pa, 3).compose(pb, 2).epsilon(delta)
    def alone(p, T, dl):
        return sd.Accountant(answer_only=True).compose(p, T).epsilon(dl).epsilon
    ea, eb = alone(pa, 3, delta / 2), alone(pb, 2, delta / 2)
    assert r.epsilon <= ea + eb                          # basic composition (Σε, Σδ)
    assert r.epsilon >= max(alone(pa, 3, delta), alone(pb, 2, delta)) * (1 - 1e-9)
    vals = [v for _, v, _, _ in r.composers if v is not None]
    assert r.epsilon == min(vals) and len(vals) >= 2
    shares = [e.share for e in r.entries]
    assert all(0 <= s <= 1 for s in shares) and abs(sum(shares) - 1) < 1e-9


# ------------------------------------------------------------------------------------------
# exact enumeration at n = 3 of two heterogeneous rounds
# ------------------------------------------------------------------------------------------
def _rr(eps, k):
    m = np.full((k, k), 1.0)
    np.fill_diagonal(m, math.exp(eps))
    return m / m.sum(axis=1, keepdims=True)


def _histogram_dist(rows, rate=1.0):
    """Distribution of the shuffled histogram (dict count-tuple -> prob); each user's
    report distribution is a row; with check-in each user reports w.p. rate."""
    k = len(rows[0])
    dist = {tuple([0] * k): 1.0}
    for row in rows:
        new = {}
        for h, p in dist.items():
            if rate < 1.0:
                new[h] = new.get(h, 0.0) + p * (1 - rate)
            for y in range(k):
                h2 = list(h)
                h2[y] += 1
                h2 = tuple(h2)
                new[h2] = new.get(h2, 0.0) + p * rate * row[y]
        dist = new
    return dist


def _product(d1, d2):
    return {(a, b): p * q for a, p in d1.items() for b, q in d2.items()}


def _hockey(P, Q, eps):
    keys = set(P) | set(Q)
    return sum(max(0.0, P.get(x, 0.0) - math.exp(eps) * Q.get(x, 0.0)) for x in keys)


def _pairs(rounds, n):
    """All (P, Q) output distributions (aligned arrays) of neighbouring datasets.

    A record is one input per round; datasets are multisets (the shuffler hides order);
    neighbours replace one record. Distributions of the two rounds are independent given
    the data, so the output distribution is the product."""
    domain = list(itertools.product(*[range(m.shape[0]) for m, _ in rounds]))
    cache = {}

    def dist(recs):
        key = tuple(sorted(recs))
        if key not in cache:
            out = None
            for j, (m, rate) in enumerate(rounds):
                dj = _histogram_dist([m[r[j]] for r in key], rate)
                out = dj if out is None else _product(out, dj)
            cache[key] = out
        return cache[key]
    Ps, Qs = [], []
    for others in itertools.combinations_with_replacement(domain, n - 1):
        for x, x2 in itertools.permutations(domain, 2):
            P, Q = dist(list(others) + [x]), dist(list(others) + [x2])
            keys = sorted(set(P) | set(Q))
            Ps.append([P.get(k, 0.0) for k in keys])
            Qs.append([Q.get(k, 0.0) for k in keys])
    return np.array(Ps), np.array(Qs)


def _exact_delta(pq, eps):
    """max over neighbouring datasets of the hockey-stick divergence at ε."""
    P, Q = pq
    return float(np.max(np.sum(np.maximum(0.0, P - math.exp(eps) * Q), axis=1)))


def _exact_epsilon(pq, delta):
    lo, hi = 0.0, 10.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _exact_delta(pq, mid) <= delta else (mid, hi)
    return lo                                            # below the true ε(δ)


@pytest.mark.parametrize("case", ["rr2-then-rr3", "checkin-then-full"])
def test_exact_two_round_composition_below_every_upper_bound(case):
    n, delta = 3, 1e-3
    if case == "rr2-then-rr3":
        protos = [sd.Shuffle(sd.RandomizedResponse(1.0, k=2), n=n),
                  sd.Shuffle(sd.RandomizedResponse(2.0, k=3), n=n)]
        rounds = [(_rr(1.0, 2), 1.0), (_rr(2.0, 3), 1.0)]
    else:
        protos = [sd.Shuffle(sd.RandomizedResponse(1.0, k=2), n=n, sampling=sd.CheckIn(0.5)),
                  sd.Shuffle(sd.RandomizedResponse(1.0, k=2), n=n)]
        rounds = [(_rr(1.0, 2), 0.5), (_rr(1.0, 2), 1.0)]
    acc = sd.Accountant()
    for p in protos:
        acc.compose(p, 1)
    pq = _pairs(rounds, n)
    exact_eps = _exact_epsilon(pq, delta)
    r = acc.epsilon(delta)
    vals = [v for _, v, _, _ in r.composers if v is not None]
    assert vals and all(v >= exact_eps for v in vals)
    assert exact_eps > 0.1                               # the check is not vacuous
    eps = 0.5 * exact_eps
    exact_d = _exact_delta(pq, eps)
    rd = acc.delta(eps)
    dvals = [v for _, v, _, _ in rd.composers if v is not None]
    assert dvals and all(v >= exact_d for v in dvals)


# ------------------------------------------------------------------------------------------
# central events (dp_accounting), replace-one
# ------------------------------------------------------------------------------------------
@needs_pld
def test_central_gaussian_matches_dp_accounting_replace_one():
    from dp_accounting import NeighboringRelation as NR, dp_event as E, pld
    ev = E.PoissonSampledDpEvent(0.05, E.GaussianDpEvent(1.5))
    ours = sd.Accountant().compose(ev, 50).epsilon(1e-6)
    a = pld.PLDAccountant(NR.REPLACE_ONE, 2e-4)
    a.compose(ev, 50)
    theirs = a.get_epsilon(1e-6)
    assert theirs * (1 - 1e-9) <= ours.epsilon <= theirs + 5e-3
    assert "replace-one" in ours.relation
    # SelfComposed == count
    r2 = sd.Accountant().compose(E.SelfComposedDpEvent(ev, 10), 5).epsilon(1e-6)
    assert r2.epsilon == ours.epsilon


@needs_pld
def test_central_gaussian_rdp_is_the_closed_form():
    from dp_accounting import dp_event as E
    z = 3.0
    c = sd.Accountant().compose(E.GaussianDpEvent(z), 7).rdp([2, 3.5, 10])
    # N(0, z²) vs N(2, z²): D_λ = λ·4/(2z²) per step
    assert np.allclose(c.values, 7 * np.array([2, 3.5, 10]) * 2 / z**2, rtol=1e-9)
    assert np.all(c.values >= 7 * np.array([2, 3.5, 10]) * 2 / z**2)


@needs_pld
def test_central_laplace_replace_one():
    from dp_accounting import dp_event as E
    b = 4.0
    s = 2.0 / b                                           # shift 2 in units of the scale
    acc = sd.Accountant().compose(E.LaplaceDpEvent(b), 1)
    for eps in (0.1, 0.3):
        exact = -math.expm1((eps - s) / 2.0)              # Laplace hockey-stick, ε < s
        got = acc.delta(eps).delta
        assert exact <= got <= exact + 2e-3
    # RDP (Mironov Prop. 6) against numerical integration of ∫ p^λ q^(1-λ)
    lam = 3.0
    f = lambda x: stats.laplace.pdf(x, 0, 1) ** lam * stats.laplace.pdf(x, s, 1) ** (1 - lam)
    val = integrate.quad(f, -50, 50, points=[0, s], limit=200)[0]
    num = math.log(val) / (lam - 1)
    got = acc.rdp([lam]).values[0]
    assert num <= got <= num * (1 + 1e-8)


@needs_pld
def test_unsupported_events_are_refused_by_name():
    from dp_accounting import dp_event as E
    with pytest.raises(NotApplicableError, match="PoissonSampledDpEvent of LaplaceDpEvent"):
        sd.Accountant().compose(E.PoissonSampledDpEvent(0.1, E.LaplaceDpEvent(1.0)), 1)
    with pytest.raises(NotApplicableError, match="RandomizedResponseDpEvent"):
        sd.Accountant().compose(E.RandomizedResponseDpEvent(0.5, 3), 1)
    with pytest.raises(ValueError, match="noise_multiplier"):
        sd.Accountant().compose(E.GaussianDpEvent(0.0), 1)


# ------------------------------------------------------------------------------------------
# interop out, state, CLI
# ------------------------------------------------------------------------------------------
@needs_pld
def test_pld_export_composed_with_dp_accounting_gaussian_equals_ledger():
    from dp_accounting import NeighboringRelation as NR, dp_event as E
    from dp_accounting.pld import privacy_loss_distribution as P
    proto, T, z, d = sd.Shuffle(sd.LDP(1.0), n=2000), 3, 4.0, 2e-4
    mine = sd.to_dp_accounting(proto, T, discretization=d)
    theirs = P.from_gaussian_mechanism(z, value_discretization_interval=d,
                                       neighboring_relation=NR.REPLACE_ONE)
    composed = mine.compose(theirs)
    e_dpa = composed.get_epsilon_for_delta(1e-6 - comp.PLD_ABS_SLACK)
    r = sd.Accountant().compose(proto, T).compose(E.GaussianDpEvent(z), 1).epsilon(1e-6)
    pld = dict((n, v) for n, v, _, _ in r.composers)["pld"]
    assert abs(pld - e_dpa) <= 1e-6 * e_dpa + 1e-9


@needs_pld
def test_to_dict_round_trip_and_json():
    from dp_accounting import dp_event as E
    acc = sd.Accountant(pld_discretization=5e-4)
    acc.compose(sd.Shuffle(sd.RandomizedResponse(1.0, k=3), n=100, sampling=sd.CheckIn(0.3)), 4, label="a")
    acc.compose(sd.Shuffle(sd.Gaussian(2.0), n=50, sampling=sd.WithoutReplacement(10)), 2)
    acc.compose(sd.Shuffle(sd.Randomizer([[0.7, 0.3], [0.4, 0.6]]), n=30), 1)
    acc.compose(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.1)), 10)
    acc.compose(E.LaplaceDpEvent(3.0), 2)
    d = acc.to_dict()
    back = sd.Accountant.from_dict(json.loads(json.dumps(d)))
    assert back.to_dict() == d and back.entries == acc.entries
    with pytest.raises(ValueError, match="relation"):
        sd.Accountant.from_dict(dict(d, relation="add-remove"))
    with pytest.raises(ValueError, match="exactly one"):
        sd.Accountant.from_dict(dict(d, entries=[{"rounds": 1}]))


def test_cli_compose_json_ledger(tmp_path, capsys):
    from shuffledp.apps.cli import main
    f = tmp_path / "b.json"
    f.write_text(json.dumps({"format": "shuffledp-ledger", "version": 1, "delta": 1e-6, "entries": [
        {"rounds": 2, "shuffle": {"n": 1000, "mechanism": {"type": "ldp", "eps0": 1.0}}},
        {"rounds": 3, "shuffle": {"n": 500, "mechanism": {"type": "rr", "eps0": 1.0, "k": 2}}}]}))
    assert main(["compose", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "upper" and len(out["entries"]) == 2 and "replace-one" in out["relation"]
    assert main(["compose", str(tmp_path / "missing.toml")]) == 2
    assert "missing.toml" in capsys.readouterr().err


def test_cli_compose_bad_file(tmp_path, capsys):
    from shuffledp.apps.cli import main
    f = tmp_path / "b.toml"
    f.write_text('format = "shuffledp-ledger"\n[[entries]]\nrounds = 1\n')
    assert main(["compose", str(f), "--delta", "1e-6"]) == 2
    assert "entries[0]" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------
# calibration of a ledger entry
# ------------------------------------------------------------------------------------------
@pytest.mark.slow
@needs_pld
def test_calibrate_entry_sigma_on_the_safe_side():
    from dp_accounting import dp_event as E
    acc = sd.Accountant().compose(sd.Shuffle(sd.LDP(0.5), n=1000), 2).compose(E.GaussianDpEvent(5.0), 2)
    c = sd.calibrate.entry(acc, 1, "sigma", 2.0, 1e-6, tol=1e-3)
    assert c.epsilon <= 2.0 and c.epsilon >= 2.0 * (1 - 1e-3)
    # one more round misses the target
    acc = sd.Accountant().compose(sd.Shuffle(sd.LDP(0.5), n=1000), 2).compose(E.GaussianDpEvent(10.0), 1)
    c2 = sd.calibrate.entry(acc, 0, "rounds", 2.0, 1e-6)
    acc2 = sd.Accountant().compose(sd.Shuffle(sd.LDP(0.5), n=1000), c2.value + 1).compose(E.GaussianDpEvent(10.0), 1)
    assert c2.epsilon <= 2.0 < acc2.epsilon(1e-6).epsilon


@pytest.mark.slow
@needs_pld
def test_readme_mixed_budget_and_the_same_from_toml(capsys):
    import pathlib
    import re

    from shuffledp.apps.cli import main
    root = pathlib.Path(__file__).resolve().parents[1]
    block = [b for b in re.findall(r"```python\n(.*?)```", (root / "README.md").read_text(), re.S)
             if "sd.Accountant()" in b][0]
    ns = {"sd": sd}
    exec(compile(block, "README.md", "exec"), ns)
    r = ns["acc"].epsilon(1e-6)
    capsys.readouterr()
    assert r.kind == "upper" and len(r.entries) == 3 and r.rounds == 1082
    assert [e.bound.split()[0] for e in r.entries][0] in ("blanket", "fmt23", "fmt20", "girgis-ub1")
    budget = root / "src" / "shuffledp" / "examples" / "budget.toml"
    assert main(["compose", str(budget), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"] == r.epsilon and [e["rounds"] for e in out["entries"]] == [30, 52, 1000]


@needs_pld
def test_ledger_rdp_sums_entries_and_never_uses_estimates():
    from dp_accounting import dp_event as E
    p = sd.Shuffle(sd.Gaussian(4.0), n=500, sampling=sd.CheckIn(0.2))
    acc = sd.Accountant().compose(p, 3).compose(E.GaussianDpEvent(6.0), 2)
    orders = [2, 4.5, 16]
    c = acc.rdp(orders)
    ref = sd.rdp(p, orders, rounds=3).values + 2 * np.array(orders) * 2 / 36.0
    assert np.allclose(c.values, ref, rtol=1e-9) and c.kind == "upper"
    r = acc.epsilon(1e-5)
    assert "liew-homogeneous" not in r.entries[0].bound     # an estimate is never an entry's view
    assert r.kind == "upper" and r.rounds == 5
