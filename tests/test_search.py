"""The certified 1-D search primitives (shuffledp.numerics.search): the certified end,
the result record and the NaN guard. Expected values come from exact rational arithmetic
(fractions.Fraction) or brute force, never from the searches themselves."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest

from shuffledp import numerics as nm
from shuffledp.numerics import SearchError, SearchResult

THIRD = Fraction(1, 3)          # a root no float equals: the certified side is exact


class Calls:
    """f with an independent evaluation count."""

    def __init__(self, f):
        self.f, self.n = f, 0

    def __call__(self, x):
        self.n += 1
        return self.f(x)


# ----- the certified end -------------------------------------------------------------------
@pytest.mark.parametrize("rtol", [1e-4, 1e-10, 0.0])
def test_bisect_smallest_returns_the_end_above_the_root(rtol):
    ok = Calls(lambda x: Fraction(x) >= THIRD)
    r = nm.bisect(ok, 0.0, 1.0, want="smallest", xtol=1e-15, rtol=rtol)
    assert Fraction(r.x) >= THIRD                       # the condition holds at x, exactly
    assert r.x == r.hi and r.certified_end == "hi"
    assert Fraction(r.lo) < THIRD                       # and the root is inside the bracket
    assert r.hi - r.lo <= max(1e-15, rtol * r.hi)
    assert r.iterations == ok.n


def test_bisect_largest_returns_the_end_below_the_root():
    r = nm.bisect(lambda x: Fraction(x) <= THIRD, 0.0, 1.0, want="largest", rtol=1e-12)
    assert Fraction(r.x) <= THIRD and r.x == r.lo and r.certified_end == "lo"
    assert Fraction(r.hi) > THIRD and r.hi - r.lo <= 1e-12 * r.lo + 1e-12


def test_bisect_target_form_and_other_end():
    f = Calls(lambda x: 1.0 - x)             # ≤ 0.25 from x = 0.75 on
    r = nm.bisect(f, 0.0, 1.0, target=0.25, xtol=1e-14, rtol=0.0)
    assert 1.0 - r.x <= 0.25 and r.x - 0.75 <= 2e-14 and r.iterations == f.n
    # the lower end already holds: returned at once, certified at "lo"
    r = nm.bisect(lambda x: 1.0 - x, 0.8, 1.0, target=0.25, try_other_end=True)
    assert r.x == 0.8 and r.certified_end == "lo" and r.iterations == 1


def test_bisect_refuses_an_uncertified_end():
    with pytest.raises(SearchError, match="predicate is False"):
        nm.bisect(lambda x: x > 2.0, 0.0, 1.0)          # never True in the bracket
    with pytest.raises(ArithmeticError):                  # SearchError is an ArithmeticError
        nm.bisect(lambda x: x < -1.0, 0.0, 1.0, want="largest")


def test_falling_root_certified_end_on_a_known_root():
    g = Calls(lambda x: float(THIRD - Fraction(x)))     # non-increasing, root 1/3
    r = nm.falling_root(g, 0.0, 1.0, xtol=1e-15, rtol=1e-12)
    assert Fraction(r.x) >= THIRD and r.x == r.hi and r.certified_end == "hi"
    assert float(Fraction(r.x) - THIRD) <= 1e-12
    assert r.iterations == g.n and r.iterations < 40      # superlinear, not 40 halvings
    assert nm.falling_root_certified(lambda x: 0.5 - x, 0.0, 1.0) >= 0.5


def test_target_root_lands_on_the_certified_side():
    f = Calls(lambda x: x ** 3)
    r = nm.target_root(f, 0.01, 50.0, target=1.0, want="largest", rtol=1e-6)
    assert r.x ** 3 <= 1.0 and r.x ** 3 >= 1.0 - 1e-6 and r.fx == r.x ** 3
    assert r.certified_end == "lo" and r.iterations == f.n
    r = nm.target_root(lambda s: 4.0 / s ** 2, 0.5, 40.0, target=1.0, want="smallest",
                       rtol=1e-6)
    assert 4.0 / r.x ** 2 <= 1.0 and r.certified_end == "hi"


@pytest.mark.parametrize("cut", [1, 2, 7, 100, 999])
def test_integer_search_matches_brute_force(cut):
    f = lambda x: x / cut                                   # noqa: E731 (≤ 1 up to cut)
    brute_largest = max(x for x in range(1, 1001) if f(x) <= 1.0)
    assert nm.integer_search(f, 1, 1001, target=1.0).x == brute_largest
    g = lambda x: cut / x                                   # noqa: E731 (≤ 1 from cut on)
    brute_smallest = min(x for x in range(1, 1001) if g(x) <= 1.0)
    lo = 0 if cut == 1 else 1
    r = nm.integer_search(lambda x: g(x) if x else math.inf, lo, 1000, target=1.0,
                          want="smallest")
    assert r.x == brute_smallest and r.certified_end == "hi"


# ----- golden section (not certified: any point is valid) ---------------------------------
def test_golden_finds_the_minimum_and_records_it():
    f = Calls(lambda x: (x - 0.3) ** 2)
    r = nm.golden(f, 0.0, 1.0, max_iter=40)
    assert abs(r.x - 0.3) < 1e-7 and r.fx == (r.x - 0.3) ** 2
    assert r.certified_end is None and r.iterations == f.n == 42
    assert nm.golden_min(lambda x: (x - 0.3) ** 2, 0.0, 1.0, 40) == (r.x, r.fx)


def test_golden_allows_infinite_values():
    # a bound that does not exist anywhere in the range: no crash, an infinite value
    r = nm.golden(lambda x: math.inf, 0.0, 1.0, max_iter=5)
    assert r.fx == math.inf and 0.0 <= r.x <= 1.0


def test_golden_integer_matches_brute_force():
    f = lambda o: abs(o - 137) + 0.5 * (o % 2)             # noqa: E731
    r = nm.golden_integer(f, 2, 1000)
    assert r.x == min(range(2, 1001), key=lambda o: (f(o), o))
    assert r.fx == f(r.x) and r.lo <= r.x <= r.hi


# ----- the NaN guard -----------------------------------------------------------------------
@pytest.mark.parametrize("search", [
    lambda f: nm.bisect(f, 0.0, 1.0, target=0.5, check_end=False),
    lambda f: nm.falling_root(f, 0.0, 1.0),
    lambda f: nm.illinois_root(f, 0.0, 1.0),
    lambda f: nm.golden(f, 0.0, 1.0, max_iter=10),
    lambda f: nm.target_root(f, 0.0, 1.0, target=1.0, want="largest", rtol=1e-6),
    lambda f: nm.golden_integer(lambda o: f(o / 100), 0, 100),
])
def test_a_nan_raises_instead_of_steering_the_search(search):
    f = Calls(lambda x: math.nan)
    with pytest.raises(SearchError, match="NaN"):
        search(f)
    assert f.n <= 2                        # raised at once, not after max_iter steps


def test_a_nan_inside_the_bracket_raises():
    # finite at the ends, NaN in the middle: the old bisection read NaN <= target as False
    def f(x):
        return math.nan if 0.2 < x < 0.8 else 1.0 - x
    with pytest.raises(SearchError):
        nm.bisect(f, 0.0, 1.0, target=0.5)
    with pytest.raises(SearchError):
        nm.falling_root(lambda x: f(x) - 0.5, 0.0, 1.0)


def test_a_predicate_returning_nan_raises():
    with pytest.raises(SearchError):
        nm.bisect(lambda x: math.nan, 0.0, 1.0)


def test_search_result_record():
    r = nm.bisect(lambda x: x >= 0.5, 0.0, 1.0)
    assert isinstance(r, SearchResult) and float(r) == r.x
    assert {f.name for f in dataclasses.fields(r)} == {"x", "lo", "hi", "iterations",
                                                        "certified_end", "fx"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.x = 0.0                                                   # type: ignore[misc]
    assert math.isnan(r.fx)                # a predicate has no value to report
    assert nm.bisect_certified(lambda x: x >= 0.5, 0.0, 1.0) == r.x


def test_the_wrappers_keep_their_errors():
    with pytest.raises(ArithmeticError):
        nm.falling_root_certified(lambda x: 1.0, 0.0, 1.0)      # g(hi) > 0: no certified end
    with pytest.raises(ValueError, match="want"):
        nm.bisect(lambda x: True, 0.0, 1.0, want="middle")
