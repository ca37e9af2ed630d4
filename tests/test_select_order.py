"""The loop's order: optimal-composition bounds after the exact pair bounds for T > 1."""

import shuffledp as sd
from shuffledp.accounting import select


def _proto():
    return sd.Shuffle(sd.LDP(6.7908), n=330_000_000)


def test_kov15_bounds_are_skipped_by_their_floor_after_the_exact_answer():
    r = sd.epsilon(_proto(), delta=8.42e-08, rounds=1549)
    assert r.bound == "fmt20"
    skipped = dict(r.not_applicable)
    for b in ("trivial", "fmt20-closed"):
        assert "cannot beat" in skipped[b], skipped[b]
        # computed on its own, the skipped bound is indeed larger than the answer
        alone = sd.epsilon(_proto(), delta=8.42e-08, rounds=1549, bound=b).epsilon
        assert alone > r.epsilon
    assert r.epsilon == sd.epsilon(_proto(), delta=8.42e-08, rounds=1549,
                                   bound="fmt20").epsilon


def test_order_unchanged_for_sampled_rounds():
    # fmt20-closed's sampled value is what skips the unsampled fmt20's exact pair there
    proto = sd.Shuffle(sd.LDP(1.0), n=10**12, sampling=sd.CheckIn(0.01))
    r = sd.epsilon(proto, delta=1e-6, rounds=10)
    assert r.bound == "fmt20-sampled"
    assert "fmt20-closed" in [c.bound for c in r.candidates]
    assert "cannot beat" in dict(r.not_applicable)["fmt20"]


def test_order_unchanged_for_one_round_and_for_calibration_targets():
    bounds, _ = select.applicable(_proto(), "replace_one")
    ids = lambda bs: [b.id for b in bs]                                    # noqa: E731
    one = ids(select._cheap_first(bounds, _proto(), 1))
    many = ids(select._cheap_first(bounds, _proto(), 10))
    target = ids(select._cheap_first(bounds, _proto(), 10, target=1.0))
    assert one == target
    assert one.index("trivial") < one.index("fmt20")
    assert many.index("trivial") > many.index("fmt20")
    assert many.index("fmt20-closed") > many.index("fmt20")
    # only the optimal-composition bounds move
    late = {b.id for b in bounds if b.after_exact}
    assert late == {"trivial", "fmt20-closed"}
    assert [b for b in many if b not in late] == [b for b in one if b not in late]


def test_order_marks_are_declared_by_the_bounds():
    # The loop reads the bounds' own marks (``Bound.costly``, ``Bound.after_exact``); these
    # are the bounds whose evaluation is exact pair or instance sums, and the closed forms
    # composed by the optimal composition theorem.
    from shuffledp.bounds.base import _REGISTRY
    assert {i for i, b in _REGISTRY.items() if b.costly} == {
        "fmt20", "fmt23", "clone-specific", "trimmed-clone", "girgis-lower", "krr-lower"}
    assert {i for i, b in _REGISTRY.items() if b.after_exact} == {
        "trivial", "fmt20-closed", "fmt23-closed"}
    # a mark is the class's own: the sampled and add/remove variants do not inherit it
    assert not _REGISTRY["fmt20-sampled"].costly and not _REGISTRY["fmt20-addremove"].costly
