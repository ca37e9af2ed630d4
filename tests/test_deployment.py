"""Deployments (issue 29): several reports per user, dummy reports, colluding users.

The reductions of ``shuffledp.accounting.deployment`` are checked against the exact law of what the
adversary sees, enumerated at n ≤ 5 in 50-digit arithmetic (tests/oracle.py): every
neighbouring dataset (the victim's whole data replaced), every input of the others, every
choice of the dummies' public inputs and of the colluders' inputs. Both directions:

* each reduced protocol's exact worst case is at least the deployment's (the reduction is
  valid), and the library's certified δ is at least the deployment's exact δ;
* where the reduction is an identity (colluders, dummies) the exact values are equal;
  where it is an inequality (k reports) the gap is shown to be real;

and sabotaged reductions (the victim's k reports as k independent users, colluders
ignored, dummies counted although the adversary sees their reports) fail the same check.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import mpmath as mp
import pytest

import shuffledp as sd
from shuffledp.accounting import deployment
from shuffledp.core.errors import NotApplicableError
from shuffledp.core.spec import proto_from_dict, proto_to_dict

from oracle import hockey, product, rr_matrix, shuffled

EPS = (0.2, 0.7, 1.5)


# ----------------------------------------------------------------------------------------
# The exact law of the deployment, written from its definition (no library code)
# ----------------------------------------------------------------------------------------
def _msets(B: int, size: int):
    return list(itertools.combinations_with_replacement(range(B), size))


def _view(R, hidden: tuple, known: tuple) -> dict:
    """Law of what the adversary sees: the histogram of all reports, and (when some reports
    are known: colluders, or dummies it made) the histogram of the known reports."""
    H = shuffled(R, hidden)
    if not known:
        return H
    K = shuffled(R, known)
    return {(tuple(a + b for a, b in zip(h, c)), c): ph * pc
            for h, ph in H.items() for c, pc in K.items()}


def deployment_pairs(R, n, k=1, D=0, h=None, same_value=False, dummies_known=False):
    """Every neighbouring pair (P, Q) of views: the victim's k report inputs (k copies of one
    value, or any k values) replaced, the h − 1 honest others' k inputs each, the D dummies'
    public inputs and the n − h colluders' inputs ranging over everything. The output law
    depends on the inputs only through their multiset, so multisets are enumerated."""
    B = len(R)
    h = n if h is None else h
    if same_value:
        victims = [((x,) * k, (y,) * k) for x in range(B) for y in range(B) if x != y]
    else:
        vs = _msets(B, k)
        victims = [(a, b) for a in vs for b in vs if a != b]
    for V0, V1 in victims:
        for O in _msets(B, (h - 1) * k):
            for Z in _msets(B, D):
                for C in _msets(B, (n - h) * k):
                    known = C + (Z if dummies_known else ())
                    hid0 = V0 + O + (() if dummies_known else Z)
                    hid1 = V1 + O + (() if dummies_known else Z)
                    yield _view(R, hid0, known), _view(R, hid1, known)


def _power(P: dict, T: int) -> dict:
    out = P
    for _ in range(T - 1):
        out = product(out, P)
    return out


def _max_hockey(laws, eps):
    """max over the (P, Q) laws and both directions of H_{e^ε}; ``eps`` a number or a
    tuple (then a tuple of values, the products formed once)."""
    many = isinstance(eps, tuple)
    best = [mp.mpf(0)] * (len(eps) if many else 1)
    for P, Q in laws:
        for i, e in enumerate(eps if many else (eps,)):
            best[i] = max(best[i], hockey(P, Q, e), hockey(Q, P, e))
    return tuple(best) if many else best[0]


def worst(pairs, eps, T=1):
    """max over the pairs and both directions of H_{e^ε} of the T-fold product (the same
    pair every round: a non-adaptive adversary, so a lower value on the T-round worst case)."""
    return _max_hockey(((_power(P, T), _power(Q, T)) for P, Q in pairs), eps)


def worst_composed(pairs, eps, m):
    """max over every sequence of m pairs (one per round, any pair each round: the others'
    data may differ between the sub-shuffles) of H_{e^ε} of the product, both directions:
    the exact worst case of m non-adaptive rounds, a lower value on the m-fold adaptive
    composition that the reductions use."""
    pairs = list(pairs)

    def laws():
        for seq in itertools.combinations_with_replacement(range(len(pairs)), m):
            P, Q = pairs[seq[0]]
            for i in seq[1:]:
                P, Q = product(P, pairs[i][0]), product(Q, pairs[i][1])
            yield P, Q
    return _max_hockey(laws(), eps)


def _product_matrix(R, k):
    """The k-fold product randomizer: input and output k-tuples (row-major)."""
    B = len(R)
    tuples = list(itertools.product(range(B), repeat=k))
    return [[math.prod(R[x[i]][y[i]] for i in range(k)) for y in tuples] for x in tuples]


def reduced_pairs(red, R, k):
    """The neighbouring pairs of the reduced protocol ``red`` as the oracle sees it: the same
    k-RR with n' users, or (the product route, a class LDP(k·ε0)) the product randomizer
    R^k itself, one kε0-LDP member of that class."""
    p = red.protocol
    assert p.sampling is None
    if isinstance(p.mechanism, sd.LDP):
        assert p.mechanism.eps0 == pytest.approx(k * math.log(R[0][0] / R[0][1]))
        return list(deployment_pairs(_product_matrix(R, k), p.n))
    return list(deployment_pairs(R, p.n))


def _rr(eps0, B):
    return rr_matrix(eps0, B)


def _proto(eps0, B, n, **kw):
    return sd.Shuffle(sd.RandomizedResponse(eps0, B), n, **kw)


# ----------------------------------------------------------------------------------------
# Cases: (eps0, B, n, deployment fields, T); n ≤ 5, k ≤ 3, D ≤ 3, h < n
# ----------------------------------------------------------------------------------------
CASES = [
    (1.0, 2, 3, dict(reports_per_user=2), 1),
    (1.0, 2, 2, dict(reports_per_user=3), 1),
    (2.0, 3, 2, dict(reports_per_user=2), 1),
    (1.0, 2, 2, dict(reports_per_user=2), 2),
    (1.0, 2, 3, dict(dummies=2), 1),
    (2.0, 3, 2, dict(dummies=3), 1),
    (1.0, 2, 2, dict(dummies=3), 2),
    (1.0, 2, 4, dict(honest=2), 1),
    (2.0, 3, 3, dict(honest=2), 1),
    (1.0, 2, 5, dict(honest=3), 2),
    (1.0, 2, 3, dict(reports_per_user=2, dummies=2, honest=2), 1),
]


def _ids(c):
    eps0, B, n, kw, T = c
    return f"{B}RR-e{eps0:g}-n{n}-" + "-".join(f"{a}{b}" for a, b in kw.items()) + f"-T{T}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_reductions_and_answer_dominate_the_exact_deployment(case):
    eps0, B, n, kw, T = case
    R = _rr(eps0, B)
    k = kw.get("reports_per_user", 1)
    proto = _proto(eps0, B, n, **kw)
    dep = list(deployment_pairs(R, n, k, kw.get("dummies", 0), kw.get("honest")))
    reds = deployment.reductions(proto)
    assert reds
    exact = worst(dep, EPS, T)
    assert exact[0] > 0
    for eps, ex in zip(EPS, exact):
        # The library's certified answer (the best over the reductions) is an upper bound.
        got = sd.delta(proto, eps, rounds=T).delta
        assert got >= float(ex) * (1 - 1e-12), (eps, got, float(ex))
    # Each reduction: its reduced protocol, composed multiplier × T times, leaks at least
    # what the deployment leaks (exact values; a product route is checked on the product
    # randomizer, one member of its class).
    for red in reds:
        if isinstance(red.protocol.mechanism, sd.LDP) and (B > 2 or k > 2 or n > 3 or T > 1):
            continue        # the product randomizer's tuples: too many for mpmath here
        vals = worst_composed(reduced_pairs(red, R, k), EPS, T * red.multiplier)
        for eps, val, ex in zip(EPS, vals, exact):
            assert val >= ex * (1 - mp.mpf(10) ** -30), (red.label, eps, val, ex)


@pytest.mark.parametrize("eps0,B,n,h", [(1.0, 2, 4, 2), (2.0, 3, 3, 2), (1.0, 2, 5, 1)])
def test_colluders_reduction_is_exact(eps0, B, n, h):
    """What the adversary sees with n − h colluders equals (in privacy) the shuffle of the h
    honest users: the exact worst cases agree to 30 digits, and lower bounds transfer."""
    R = _rr(eps0, B)
    a = worst(deployment_pairs(R, n, h=h), EPS)
    b = worst(deployment_pairs(R, h), EPS)
    assert b[0] > 0
    for x, y in zip(a, b):
        assert abs(x - y) <= mp.mpf(10) ** -30 * max(y, 1)
    (red,) = deployment.reductions(_proto(eps0, B, n, honest=h))
    assert red.protocol == _proto(eps0, B, h) and red.lower is not None


@pytest.mark.parametrize("eps0,B,n,D", [(1.0, 2, 3, 2), (2.0, 3, 2, 3)])
def test_dummies_reduction_is_exact_for_the_worst_dummy_inputs(eps0, B, n, D):
    """Maximised over the dummies' public inputs, the deployment leaks exactly what the
    shuffle of n + D users leaks (and a fixed good choice of inputs leaks less)."""
    R = _rr(eps0, B)
    a = worst(deployment_pairs(R, n, D=D), EPS)
    b = worst(deployment_pairs(R, n + D), EPS)
    assert b[0] > 0
    for x, y in zip(a, b):
        assert abs(x - y) <= mp.mpf(10) ** -30 * max(y, 1)
    # A single choice (all dummies on input 0) leaks at most the worst one.
    fixed = [(_view(R, V0 + O + (0,) * D, ()), _view(R, V1 + O + (0,) * D, ()))
             for V0, V1 in [((0,), (1,)), ((1,), (0,))] for O in _msets(B, n - 1)]
    assert 0 < worst(fixed, EPS[0]) <= b[0]


def test_k_reports_gap_to_the_k_fold_route_is_real():
    """The k-fold route is an inequality: the joint shuffle of 2 reports per user leaks
    strictly less than two separate shuffles at small ε (n = 3, binary RR, ε0 = 1), the same
    at ε = 1.5. (Compared with
    the same pair in both sub-shuffles the joint shuffle can leak more: the others' items
    may differ between them — at n = 2, k = 3 it does; the composition covers that.)"""
    R = _rr(1.0, 2)
    dep = list(deployment_pairs(R, 3, k=2))
    sep = list(deployment_pairs(R, 3))
    small = (0.2, 0.7, 1.0)
    for a, b in zip(worst(dep, small), worst_composed(sep, small, 2)):
        assert a < b * (1 - mp.mpf(10) ** -3)
    # At larger ε the extreme outcomes (every report equal to the victim's) decide both,
    # and the route is tight.
    a, b = worst(dep, 1.5), worst_composed(sep, 1.5, 2)
    assert abs(a - b) <= mp.mpf(10) ** -30


# ----------------------------------------------------------------------------------------
# Sabotaged reductions: the same check fails on them
# ----------------------------------------------------------------------------------------
def _check(reduced_worst, dep_pairs, eps):
    exact = worst(dep_pairs, eps)
    assert reduced_worst(eps) >= exact * (1 - mp.mpf(10) ** -30), "reduction below exact"


def test_sabotage_k_reports_as_k_times_n_independent_users_is_caught():
    R = _rr(1.0, 2)
    for n, k in ((2, 2), (3, 2), (2, 3)):
        dep = list(deployment_pairs(R, n, k=k))
        valid = list(deployment_pairs(R, n))                # the k-fold route, exact
        _check(lambda e: worst_composed(valid, e, k), dep, 0.7)
        wrong = list(deployment_pairs(R, k * n))           # "k·n independent users"
        with pytest.raises(AssertionError, match="reduction below exact"):
            _check(lambda e: worst(wrong, e), dep, 0.7)


def test_sabotage_colluders_ignored_is_caught():
    R = _rr(1.0, 2)
    dep = list(deployment_pairs(R, 4, h=2))
    _check(lambda e: worst(list(deployment_pairs(R, 2)), e), dep, 0.7)
    with pytest.raises(AssertionError, match="reduction below exact"):
        _check(lambda e: worst(list(deployment_pairs(R, 4)), e), dep, 0.7)


def test_sabotage_dummies_the_adversary_can_subtract_is_caught():
    """Dummies count only when their randomness is hidden: if the adversary made them (or
    sees their reports), counting them as n + D users is below the exact leak."""
    R = _rr(1.0, 2)
    dep = list(deployment_pairs(R, 2, D=3, dummies_known=True))
    _check(lambda e: worst(list(deployment_pairs(R, 2)), e), dep, 0.7)
    with pytest.raises(AssertionError, match="reduction below exact"):
        _check(lambda e: worst(list(deployment_pairs(R, 5)), e), dep, 0.7)


# ----------------------------------------------------------------------------------------
# The records, the answer's labels, the identities with today's answers
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw,msg", [
    (dict(reports_per_user=0), "reports_per_user must be an integer in [1, inf); got 0"),
    (dict(reports_per_user=1.5), "reports_per_user must be an integer in [1, inf); got 1.5"),
    (dict(dummies=-1), "dummies must be an integer in [0, inf); got -1"),
    (dict(honest=0), "honest must be an integer in [1, n=10]"),
    (dict(honest=11), "honest must be an integer in [1, n=10]"),
])
def test_validation_names_parameter_range_value(kw, msg):
    with pytest.raises(ValueError) as ei:
        sd.Shuffle(sd.LDP(1.0), 10, **kw)
    assert msg in str(ei.value)


def test_defaults_are_todays_protocol_and_answer():
    p = sd.Shuffle(sd.LDP(1.0), 1000)
    assert not p.is_deployment and repr(p) == "Shuffle(mechanism=LDP(eps0=1.0), n=1000, sampling=None)"
    for q in (sd.Shuffle(sd.LDP(1.0), 1000, honest=1000),
              sd.Shuffle(sd.LDP(1.0), 1000, dummies=0, reports_per_user=1)):
        assert not q.is_deployment
        assert sd.epsilon(q, 1e-6).epsilon == sd.epsilon(p, 1e-6).epsilon
    d = sd.Shuffle(sd.LDP(1.0), 1000, reports_per_user=2, dummies=5, honest=900)
    assert "2 reports per user" in d.describe() and "5 dummy reports" in d.describe()
    assert "900 honest users" in d.describe()
    assert "reports_per_user=2" in repr(d) and "honest=900" in repr(d)


def test_answer_says_which_reduction_and_what_it_is_for():
    p = sd.Shuffle(sd.LDP(1.0), 10_000, reports_per_user=2)
    r = sd.epsilon(p, 1e-6)
    assert r.bound.startswith(("k-fold/", "product/"))
    assert "k = 2 reports per user" in r.valid_for
    assert {c.bound.split("/")[0] for c in r.candidates} == {"k-fold", "product"}
    assert r.protocol is p and r.chosen is not None
    # The k-fold route answers exactly what two rounds of the one-report round answer.
    two = sd.epsilon(sd.Shuffle(sd.LDP(1.0), 10_000), 1e-6, rounds=2)
    kf = min(c.epsilon for c in r.candidates if c.bound.startswith("k-fold/"))
    assert kf == two.epsilon
    assert r.epsilon <= kf
    h = sd.epsilon(sd.Shuffle(sd.LDP(1.0), 10_000, honest=5000), 1e-6)
    assert h.bound.startswith("honest/") and "5000 honest users" in h.valid_for
    assert h.epsilon == sd.epsilon(sd.Shuffle(sd.LDP(1.0), 5000), 1e-6).epsilon


def test_more_colluders_or_fewer_dummies_never_help():
    m = sd.RandomizedResponse(2.0, 4)
    hs = [sd.epsilon(sd.Shuffle(m, 2000, honest=h), 1e-6).epsilon for h in (2000, 1500, 500)]
    assert hs[0] < hs[1] < hs[2]
    ds = [sd.epsilon(sd.Shuffle(m, 2000, dummies=D), 1e-6).epsilon for D in (0, 500, 5000)]
    assert ds[0] > ds[1] > ds[2]


def test_sampling_refusals_have_reasons():
    p = sd.Shuffle(sd.LDP(1.0), 1000, sampling=sd.CheckIn(0.5), reports_per_user=2, dummies=10)
    reds, refused = deployment.plan(p)
    assert [r.label for r in reds] == ["product"]
    why = dict(refused)
    assert "share one participation draw" in why["k-fold"]
    assert "not counted" in why["dummies"]
    assert reds[0].protocol == sd.Shuffle(sd.LDP(2.0), 1000, sampling=sd.CheckIn(0.5))
    r = sd.epsilon(p, 1e-6)
    assert r.bound.startswith("product/")
    assert any(b == "k-fold" for b, _ in r.not_applicable)
    wr = sd.Shuffle(sd.LDP(1.0), 1000, sampling=sd.WithoutReplacement(100), honest=500)
    with pytest.raises(NotApplicableError, match="hypergeometric"):
        sd.epsilon(wr, 1e-6)


def test_gaussian_product_route_uses_sigma_over_sqrt_k():
    p = sd.Shuffle(sd.Gaussian(2.0), 1000, reports_per_user=4)
    labels = {r.label: r.protocol for r in deployment.reductions(p)}
    assert labels["product"].mechanism == sd.Gaussian(1.0)
    assert labels["k-fold"] == sd.Shuffle(sd.Gaussian(2.0), 1000)


def test_no_bound_answers_a_deployment_directly():
    from shuffledp.accounting.accountant import applicable
    ok, no = applicable(sd.Shuffle(sd.LDP(1.0), 100, reports_per_user=2))
    assert ok == [] and no and all("deployment" in w for _, w in no)


def test_round_trip_and_ledger():
    p = sd.Shuffle(sd.RandomizedResponse(2.0, 4), 3000, reports_per_user=2, dummies=30,
                   honest=2500)
    d = proto_to_dict(p)
    assert d["reports_per_user"] == 2 and d["dummies"] == 30 and d["honest"] == 2500
    assert proto_from_dict(d) == p
    assert "reports_per_user" not in proto_to_dict(sd.Shuffle(sd.LDP(1.0), 10))
    with pytest.raises(ValueError, match="shuffle keys must be among"):
        proto_from_dict({"n": 10, "mechanism": {"type": "ldp", "eps0": 1.0}, "reports": 2})
    acc = sd.Accountant().compose(p, rounds=3)
    r = acc.epsilon(1e-6)
    assert float(r) == sd.epsilon(p, 1e-6, rounds=3).epsilon
    again = sd.Accountant.from_dict(acc.to_dict())
    assert float(again.epsilon(1e-6)) == float(r)
    acc.compose(sd.Shuffle(sd.LDP(1.0), 3000), rounds=2)
    mixed = acc.epsilon(1e-6)
    assert "reports per user" in mixed.valid_for
    assert mixed.entries[0].bound.startswith("honest+")
    # Each plain combination is a valid ledger; the answer is the smallest of them.
    for red in deployment.reductions(p):
        alt = sd.Accountant().compose(red.protocol, 3 * red.multiplier).compose(
            sd.Shuffle(sd.LDP(1.0), 3000), 2)
        assert float(mixed) <= float(alt.epsilon(1e-6)) * (1 + 1e-12)


def test_cli_flags_and_exit_2():
    run = [sys.executable, "-m", "shuffledp", "epsilon", "--eps0", "1", "--n", "1e4",
           "--delta", "1e-6"]
    ok = subprocess.run(run + ["--reports-per-user", "2", "--honest", "9000", "--json"],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert '"bound": "honest+' in ok.stdout and '"reports_per_user": 2' in ok.stdout
    bad = subprocess.run(run + ["--honest", "2e4"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "--honest must be an integer in [1, n=10000]" in bad.stderr
    bad = subprocess.run(run + ["--dummies", "-1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--dummies must be an integer" in bad.stderr


def test_sabotage_end_to_end_library_number_for_k_times_n_users_is_caught():
    """The number people quote by mistake — the library's own certified δ for k·n users each
    sending one report — is below the exact leak of the deployment; the answer for the
    deployment is not."""
    R = _rr(1.0, 2)
    dep = list(deployment_pairs(R, 2, k=3))
    wrong = sd.Shuffle(sd.RandomizedResponse(1.0, 2), 6)
    right = sd.Shuffle(sd.RandomizedResponse(1.0, 2), 2, reports_per_user=3)
    _check(lambda e: mp.mpf(sd.delta(right, e).delta) * (1 + mp.mpf(10) ** -12), dep, 0.7)
    with pytest.raises(AssertionError, match="reduction below exact"):
        _check(lambda e: mp.mpf(sd.delta(wrong, e).delta), dep, 0.7)


def test_ledger_pld_export_and_rdp_take_a_reduction():
    p = sd.Shuffle(sd.RandomizedResponse(2.0, 10), 10_000, reports_per_user=2)
    acc = sd.Accountant().compose(p, 3).compose(sd.Shuffle(sd.LDP(1.0), 1000), 2)
    assert "k = 2 reports per user" in acc.rdp([2, 8]).valid_for
    # The export is the ledger with each deployment entry as one valid reduction: its ε is
    # at least that of the best combination (up to the grid) and a valid bound of its own.
    pld = acc.to_dp_accounting()
    kfold = sd.Accountant().compose(sd.Shuffle(sd.RandomizedResponse(2.0, 10), 10_000), 6) \
        .compose(sd.Shuffle(sd.LDP(1.0), 1000), 2)
    assert pld.get_epsilon_for_delta(1e-6) == pytest.approx(
        kfold.to_dp_accounting().get_epsilon_for_delta(1e-6), rel=1e-12)


def _doc(name):
    from pathlib import Path
    return (Path(__file__).resolve().parents[1] / "docs" / name).read_text()


def _route(r, prefix):
    return min(c.epsilon for c in r.candidates
               if c.bound.startswith(prefix + "/") and c.kind == "upper" and c.default)


def test_documented_numbers_are_what_the_library_computes():
    """The must-show numbers of issue 29 as printed in docs/ (4 significant digits)."""
    page = _doc("reports-per-user.md")
    rr = sd.RandomizedResponse(2.0, 10)
    for k, ans, kf, prod, bad in ((2, 0.03372, 0.03372, 0.1698, 0.01588),
                                  (4, 0.04891, 0.04891, 2.189, 0.01089)):
        r = sd.epsilon(sd.Shuffle(rr, 100_000, reports_per_user=k), 1e-6)
        assert r.bound == "k-fold/blanket"
        for got, want in ((r.epsilon, ans), (_route(r, "k-fold"), kf),
                          (_route(r, "product"), prod),
                          (sd.epsilon(sd.Shuffle(rr, k * 100_000), 1e-6).epsilon, bad)):
            assert got == pytest.approx(want, rel=6e-4) and f"{want:g}" in page
        # The invalid number is below the answer: what not to quote.
        assert bad < ans
    assert sd.epsilon(sd.Shuffle(rr, 100_000), 1e-6).epsilon == pytest.approx(0.02311, rel=6e-4)
    page = _doc("dummies.md")
    rr = sd.RandomizedResponse(4.0, 100)
    today = sd.epsilon(sd.Shuffle(rr, 1000), 1e-6).epsilon
    assert sd.epsilon(sd.Shuffle(rr, 1000, dummies=0), 1e-6).epsilon == today
    for D, want in ((0, 0.7613), (1000, 0.5415), (10_000, 0.2222)):
        got = sd.epsilon(sd.Shuffle(rr, 1000, dummies=D), 1e-6).epsilon
        assert got == pytest.approx(want, rel=6e-4) and f"{want:g}" in page
    page = _doc("colluders.md")
    today = sd.epsilon(sd.Shuffle(sd.LDP(1.0), 10**6), 1e-6).epsilon
    prev = 0.0
    for h, want in ((10**6, 0.004335), (9 * 10**5, 0.004594), (10**5, 0.01528)):
        got = sd.epsilon(sd.Shuffle(sd.LDP(1.0), 10**6, honest=h), 1e-6).epsilon
        assert got == pytest.approx(want, rel=6e-4) and f"{want:g}" in page
        assert got > prev
        prev = got
        if h == 10**6:
            assert got == today


def test_calibration_through_a_ledger_factory():
    make = lambda e0: sd.Accountant().compose(  # noqa: E731
        sd.Shuffle(sd.LDP(e0), 10_000, reports_per_user=2), 10)
    c = sd.calibrate.calibrate(make, 1.0, 1e-6, parameter="eps0", increasing=True)
    p = sd.Shuffle(sd.LDP(c.value), 10_000, reports_per_user=2)
    assert sd.epsilon(p, 1e-6, rounds=10).epsilon <= 1.0
    # Two reports per user cost privacy: one report per user affords a larger eps0.
    one = sd.calibrate.eps0(10_000, 1.0, 1e-6, rounds=10)
    assert one.value > c.value
