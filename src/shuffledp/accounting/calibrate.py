"""Calibration: the inverse questions users actually ask.

* ``eps0``   — the largest ε0 (any LDP randomizer, or k-RR with ``k=``) meeting a target;
* ``sigma``  — the smallest Gaussian σ meeting a target (σ per unit ℓ2 diameter; the
  result's ``noise_multiplier`` is the same noise as an Opacus noise multiplier, 2σ);
* ``rounds`` — the largest number of rounds T;
* ``users``  — the smallest number of users n;
* ``calibrate`` — the generic form (any one parameter of a ledger, dp_accounting's
  ``calibrate_dp_mechanism`` shape), of which the four above are thin wrappers;
  ``entry`` calibrates one parameter of one entry of a ledger.

Every bound is monotone in these parameters, so each is bracket-and-bisect on the
accountant's certified upper bound. The returned parameter is always on the certified
side: the accountant's ε at it is ≤ the target (the bisection keeps the end where that
was *computed*, never an interpolated one). Relative tolerance on ε: 1e-5 by default.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..core import _validate as v
from .accountant import ask_protocol
from ..core.views import EpsilonAt
from ..bounds.base import CannotBeat

if TYPE_CHECKING:
    from .ledger import Accountant
    from ..core.mechanisms import Mechanism
    from ..core.protocols import Sampling, Shuffle
from ..core.errors import NotApplicableError
from ..core.mechanisms import Gaussian, LDP, RandomizedResponse
from ..numerics import bisect, integer_search, target_root
from ..core.protocols import Shuffle
from ..core.relations import REPLACE_ONE, adjacency_text, everyone_reports_reason
from ..core.relations import relation as _relation
from ..core.relations import short as _short
from ..core.results import NumberRecord

__all__ = ["Calibration", "calibrate", "entry", "eps0", "sigma", "rounds", "users"]


@dataclass(frozen=True)
class Calibration(NumberRecord):
    """A calibrated parameter with the guarantee that certifies it.

    Behaves like the parameter's number: ``float(c)``, ``f"{c:.3f}"`` and comparisons use
    ``value``. ``runner_up`` is the next-best bound: of the other valid upper bounds for the
    protocol, the one that *alone* allows the best parameter; ``runner_up_value`` is that
    parameter (``runner_up_epsilon`` its certified ε there), so the two can be compared
    directly. (The second-smallest ε at ``value`` would not do: where the winner is far
    ahead, the trivial bound ε = T·ε0 can be second there while another bound alone
    allows a much larger ε0.)
    """

    parameter: str         # "eps0", "sigma", "rounds" or "users"
    value: float
    epsilon: float         # the certified ε at ``value`` (≤ target)
    target: float
    delta: float
    rounds: int
    bound: str             # the bound that achieved it
    runner_up: str | None  # the bound that alone allows the best parameter after ``bound``
    runner_up_epsilon: float | None   # its certified ε at ``runner_up_value``
    protocol: Shuffle
    note: str | None = None  # e.g. the search cap was reached (the value is the cap)
    runner_up_value: float | None = None   # the parameter the runner-up alone allows
    #: The neighbouring relation the certified ε holds under (docs/relations.md).
    relation: str = REPLACE_ONE
    #: Finds the runner-up's own parameter on first use (a second calibration, as costly as
    #: the first, so it is not paid by callers that only want ``value``).
    _search: Any = field(default=None, compare=False, repr=False)
    #: The other valid upper bounds at ``value``: the runner-up is searched among them.
    _rivals: tuple = field(default=(), compare=False, repr=False)
    #: The randomizers (and deployment) the certifying bound's guarantee holds for, as the
    #: accountant states it at ``value`` (``Result.valid_for``).
    valid_for: str | None = None

    def __getattribute__(self, name):
        if name in ("runner_up", "runner_up_value", "runner_up_epsilon"):
            object.__getattribute__(self, "_resolve")()
        return object.__getattribute__(self, name)

    def _resolve(self) -> None:
        search = object.__getattribute__(self, "_search")
        if search is None:
            return
        object.__setattr__(self, "_search", None)
        ru = search()
        if ru is not None:
            object.__setattr__(self, "runner_up", ru.bound)
            object.__setattr__(self, "runner_up_value", ru.value)
            object.__setattr__(self, "runner_up_epsilon", ru.epsilon)

    def _value(self):
        return self.value

    @property
    def noise_multiplier(self) -> float | None:
        """The calibrated Gaussian noise as a noise multiplier z (noise N(0, z²C²I) on
        inputs clipped to ℓ2 norm C, the Opacus / dp_accounting unit): 2σ for a ``sigma``
        calibration (σ is per unit ℓ2 diameter, and clipped inputs have diameter 2C); the
        value itself for a central event's ``noise_multiplier``; None otherwise."""
        if self.parameter == "sigma":
            return 2.0 * self.value
        if self.parameter == "noise_multiplier":
            return self.value
        return None

    def _value_text(self, value) -> str:
        if self.parameter == "sigma":
            return (f"{value:.8g} per unit l2 diameter = noise multiplier {2.0 * value:.8g} "
                    "for inputs clipped to l2 norm C")
        return f"{value:.8g}"

    def __repr__(self) -> str:
        nm = (f", noise_multiplier={self.noise_multiplier:.8g}"
              if self.parameter == "sigma" else "")
        return (f"Calibration({self.parameter}={self.value:.8g}{nm}, epsilon={self.epsilon:.6g} "
                f"<= {self.target:g}, delta={self.delta:g}, bound={self.bound!r})")

    def to_dict(self) -> dict:
        d = {"parameter": self.parameter, "value": self.value, "epsilon": self.epsilon,
             "target": self.target, "delta": self.delta, "rounds": self.rounds,
             "bound": self.bound, "runner_up": self.runner_up,
             "runner_up_value": self.runner_up_value,
             "runner_up_epsilon": self.runner_up_epsilon,
             "protocol": self.protocol.describe(), "valid_for": self.valid_for,
             "note": self.note,
             "relation": ("replace-one" if self.relation == REPLACE_ONE
                          else self.relation)}
        if self.noise_multiplier is not None:
            d["noise_multiplier"] = self.noise_multiplier
        if self.parameter == "sigma":
            d["unit"] = ("value: sigma per unit l2 diameter; noise_multiplier: noise "
                         "multiplier for inputs clipped to l2 norm C (= 2 * sigma)")
        return d

    def _repr_html_(self) -> str:
        """Notebooks: the parameter, the certified ε it gives, the bound and the runner-up."""
        import html

        e = html.escape
        v = (f"{int(self.value)}" if self.parameter in ("rounds", "users")
             else f"{self.value:.8g}")
        rows = [("certified epsilon", f"{self.epsilon:.6g} <= target {self.target:g} at "
                                      f"delta = {self.delta:g}, rounds = {self.rounds}"),
                ("certified by", f"'{self.bound}' (upper bound)"),
                ("valid for", self.valid_for or ""),
                ("protocol", self.protocol.describe())]
        if self.noise_multiplier is not None and self.parameter != "noise_multiplier":
            rows.insert(0, ("noise multiplier", f"{self.noise_multiplier:.8g} (inputs clipped "
                                                "to l2 norm C, noise N(0, z²C²I))"))
        if self.runner_up:
            rows.append(("runner-up", self.runner_up_text() or ""))
        if self.note:
            rows.append(("note", self.note))
        body = "".join(f"<tr><th style='text-align:left'>{e(k)}</th><td>{e(x)}</td></tr>"
                       for k, x in rows)
        return (f"<p><b>{e(self.parameter)} = {e(v)}</b></p><table>{body}</table>"
                f"<p><small>{e(adjacency_text(self.relation))}</small></p>")

    def runner_up_text(self) -> str | None:
        """'fmt20-closed would allow eps0 = 2.1' (None without a runner-up)."""
        if not self.runner_up:
            return None
        if self.runner_up_value is None:
            return f"'{self.runner_up}' cannot meet the target on its own"
        v = (f"{int(self.runner_up_value)}" if self.parameter in ("rounds", "users")
             else f"{self.runner_up_value:.6g}")
        if self.parameter == "sigma":
            v += f" (noise multiplier {2.0 * self.runner_up_value:.6g})"
        return f"'{self.runner_up}' alone would allow {self.parameter} = {v}"

    def __str__(self) -> str:
        # σ on a line of its own: both units, so nobody reads it as a noise multiplier.
        sep = "\n" if self.parameter == "sigma" else ""
        s = (f"{self.parameter} = {self._value_text(self.value)}{sep}"
             f"  ->  epsilon = {self.epsilon:.6g} <= target {self.target:g} at delta = "
             f"{self.delta:g}, rounds = {self.rounds} ({_short(self.relation)} neighbours)\n"
             f"certified by '{self.bound}' ({self.protocol.describe()})")
        if self.valid_for:
            s += "\n" + textwrap.fill(f"valid for: {self.valid_for}", 100,
                                      subsequent_indent="  ")
        if self.runner_up:
            s += f"\nrunner-up: {self.runner_up_text()}"
        if self.note:
            s += f"\nnote: {self.note}"
        return s


@dataclasses.dataclass(frozen=True)
class _Run:
    """How one calibration runs (passed down explicitly): ``only`` restricts the accountant
    to one bound (the runner-up search), ``step`` is called once per accountant evaluation
    (the CLI's progress bar)."""

    only: str | None = None
    step: Callable[[], None] | None = None

    def tick(self) -> None:
        if self.step is not None:
            self.step()


_PLAIN = _Run()


class _Missed:
    """What a single named bound 'certifies' where it does not apply: nothing."""

    epsilon = math.inf


def _best(proto, delta, T, relation=REPLACE_ONE, run: _Run = _PLAIN):
    run.tick()
    return _best_cached(proto, delta, T, run.only, relation)


@functools.lru_cache(maxsize=64)
def _best_cached(proto, delta, T, only, relation=REPLACE_ONE):
    # Cached: the bracket, the loop's ends and the final record ask the same point again
    # (protocols are frozen and hashable; a Result is never modified).
    if only is not None:
        try:
            return ask_protocol(proto, EpsilonAt(delta), T, bound=only, relation=relation)
        except (NotApplicableError, ArithmeticError):
            return _Missed()
    return ask_protocol(proto, EpsilonAt(delta), T, upper_only=True, relation=relation)


def _meets(proto, delta, T, target, relation=REPLACE_ONE, run: _Run = _PLAIN) -> float:
    """A certified ε that is ≤ target exactly when the accountant's answer is (calibration's
    yes/no question, answered with the cheapest bounds that decide it); inf when every
    candidate provably stays above the target."""
    run.tick()
    try:
        return ask_protocol(proto, EpsilonAt(delta), T, upper_only=True, target=target,
                    relation=relation).epsilon
    except CannotBeat as exc:
        return max(exc.floor, math.nextafter(target, math.inf))


def _finish(param, value, proto, target, delta, T, relation=REPLACE_ONE, run: _Run = _PLAIN):
    r = _best(proto, delta, T, relation, run)
    if run.only is not None:
        return Calibration(param, value, r.epsilon, target, delta, T, run.only, None, None,
                           proto, relation=relation, valid_for=r.valid_for)
    ups = sorted((c for c in r.candidates if c.kind == "upper" and c.default),
                 key=lambda c: c.epsilon)
    ru = ups[1] if len(ups) > 1 else None      # until the search below names a better one
    from .select import applicable
    if proto.is_deployment:
        # Candidates are '<reduction>/<bound>': the rivals are the other plain bounds (each
        # calibrated alone through every reduction), not the reduction-labelled names.
        plain = [c.bound.rsplit("/", 1)[-1] for c in ups]
        rivals = tuple(dict.fromkeys(b for b in plain if b != plain[0]))
        return Calibration(param, value, r.epsilon, target, delta, T, r.bound,
                           rivals[0] if rivals else None, None, proto, _rivals=rivals,
                           relation=relation, valid_for=r.valid_for)
    rivals = tuple(b.id for b in applicable(proto, relation)[0]
                   if b.kind == "upper" and b.default and b.id != r.bound)
    return Calibration(param, value, r.epsilon, target, delta, T, r.bound,
                       ru.bound if ru else None, None, proto, _rivals=rivals,
                       relation=relation, valid_for=r.valid_for)


def _with_runner_up(calibration, progress, *args, rival_tol: float | None = None,
                    **kw) -> Calibration:
    """``calibration(*args, run=..., **kw)`` over every bound, with the search for the
    runner-up attached (run lazily): each other valid upper bound calibrated alone by the
    same call with the same arguments (``rival_tol``, when given, replaces ``tol``: a
    coarser search); the one allowing the best parameter wins."""
    cal = calibration(*args, run=_Run(None, progress), **kw)
    rival_kw = kw if rival_tol is None else dict(kw, tol=rival_tol)

    def again(rival):
        return calibration(*args, run=_Run(rival, progress), **rival_kw)

    if cal.runner_up is None:
        return cal
    larger = cal.parameter in ("eps0", "rounds")      # else sigma, users: smaller is better
    rivals = cal._rivals or (cal.runner_up,)

    def search():
        best = None
        for rival in rivals:
            try:
                ru = again(rival)
            except (NotApplicableError, ValueError, ArithmeticError):
                continue
            if not math.isfinite(ru.epsilon) or ru.epsilon > cal.target:
                continue
            if best is None or (ru.value > best.value if larger else ru.value < best.value):
                best = ru
        return best

    return dataclasses.replace(cal, _search=search)


def _family(template, e0):
    """The member of ``template``'s family with local level e0 (frozen dataclasses)."""
    import dataclasses

    from ..core.mechanisms import LocalRandomizer, Randomizer
    if isinstance(template, (Randomizer, Gaussian)) or not dataclasses.is_dataclass(template) \
            or not hasattr(template, "eps0"):
        names = ", ".join(t.__name__ for t in LocalRandomizer if t is not Randomizer)
        raise ValueError("mechanism must be a randomizer family with an eps0 parameter "
                         f"({names}); got {template!r}")
    return dataclasses.replace(template, eps0=e0)



# ------------------------------------------------------------------------------------------
# The generic calibrator (dp_accounting's calibrate_dp_mechanism shape)
# ------------------------------------------------------------------------------------------
def _ledger_epsilon(acc, delta, target=None, run: _Run = _PLAIN):
    e = acc.entries
    rel = acc.relation
    if len(e) == 1 and e[0].is_shuffle:
        if run.only is None and target is not None:
            # A yes/no question (integer parameters): the cheapest bounds that decide it.
            return _meets(e[0].item, delta, e[0].rounds, target, rel, run)
        # (the runner-up search: only the named bound certifies, see ``_best``)
        return _best(e[0].item, delta, e[0].rounds, rel, run).epsilon
    run.tick()
    return acc.epsilon(delta).epsilon


def _finish_ledger(param, value, acc, target, delta, run: _Run = _PLAIN):
    entries = acc.entries
    if len(entries) == 1 and entries[0].is_shuffle:
        return _finish(param, value, entries[0].item, target, delta, entries[0].rounds,
                       acc.relation, run)
    r = acc.epsilon(delta)
    vals = sorted((val, n) for n, val, _, _ in r.composers if val is not None)
    ru = vals[1] if len(vals) > 1 else None
    return Calibration(param, value, r.epsilon, target, delta, r.rounds,
                       f"ledger:{r.composition}", f"ledger:{ru[1]}" if ru else None,
                       ru[0] if ru else None, acc, relation=acc.relation,
                       valid_for=r.valid_for)


def calibrate(make: Callable[[float], Accountant], epsilon: float, delta: float, *,
              parameter: str = "x", increasing: bool, discrete: bool = False,
              start: float = 1.0, lo: float | None = None, hi: float | None = None,
              growth: float = 2.0, limits: tuple[float, float] = (1e-3, 1e8),
              tol: float = 1e-5, progress: Callable[[], None] | None = None,
              _run: _Run | None = None) -> Calibration:
    """The parameter x of ``make(x)`` (a ledger, ``sd.Accountant``) that meets the target.

    The shape of dp_accounting's ``calibrate_dp_mechanism``: a family of mechanisms indexed
    by one parameter, a target (ε, δ), and a monotone search that returns the parameter on
    the certified side — the ledger's ε at the returned value was *computed* ≤ ``epsilon``.

    Parameters
    ----------
    make : callable x ↦ Accountant (build the ledger with that parameter value)
    epsilon, delta : the target
    parameter : name reported in the result ("eps0", "sigma", "rounds", "users", ...)
    increasing : True when ε grows with x (ε0, rounds): the largest x is returned;
        False when it shrinks (σ, n): the smallest x is returned.
    discrete : integer parameter (rounds, n)
    start, lo, hi : bracket hints (``start`` is where the search begins without them)
    growth : bracket expansion factor
    limits : (smallest, largest) value searched; past the largest an increasing search
        returns the last certified value and a decreasing one raises NotApplicableError.
    tol : relative tolerance on ε for real parameters.
    progress : callable, optional
        Called once per accountant evaluation (a progress bar's ``update``).
    """
    run = _run if _run is not None else _Run(None, progress)
    target = v.real("epsilon", epsilon, lo=0.0, lo_open=True)
    d = v.probability("delta", delta)
    memo: dict = {}

    def eps_at(x):
        if x not in memo:
            memo[x] = _ledger_epsilon(make(x), d, target if discrete else None, run)
        return memo[x]

    lim_lo, lim_hi = limits
    if increasing:
        if lo is None:
            lo = start
            while eps_at(lo) > target:
                if discrete or lo / growth < lim_lo:
                    raise NotApplicableError(f"even {parameter}={lo:g} exceeds epsilon={target:g}: "
                                             f"{eps_at(lo):.6g}")
                lo = lo / growth
        elif discrete and eps_at(lo) > target:
            raise NotApplicableError(f"even {parameter}={lo:g} exceeds epsilon={target:g}: {eps_at(lo):.6g}")
        if hi is None:
            hi = lo * growth
        while eps_at(hi) <= target:
            lo, hi = hi, (hi * growth if not discrete else int(hi * growth))
            if hi > lim_hi:
                # Past the cap: search up to the cap itself (never silently the last
                # bracket end), and say so when the cap itself meets the target.
                top = int(lim_hi) if discrete else lim_hi
                if lo >= top or eps_at(top) <= target:
                    out = _finish_ledger(parameter, top, make(top), target, d, run)
                    return dataclasses.replace(out, note=(
                        f"the search stopped at its cap {parameter}={top:g}: larger values "
                        "may also meet the target (raise the cap to search further)"))
                hi = top
                break
        # discrete: lo and hi hold whole numbers (possibly as floats, from ``start``)
        val = (integer_search(eps_at, lo, hi, target=target).x
               if discrete else target_root(eps_at, lo, hi, target=target, want="largest", rtol=tol).x)
        return _finish_ledger(parameter, val, make(val), target, d, run)
    if discrete:
        lo = int(lim_lo if lo is None else lo)
        if eps_at(lo) <= target:
            return _finish_ledger(parameter, lo, make(lo), target, d, run)
        hi = lo * 2 if hi is None else hi
        while eps_at(hi) > target:
            lo, hi = hi, int(hi * growth)
            if hi > lim_hi:
                raise NotApplicableError(f"no {parameter} up to {lim_hi:g} meets epsilon={target:g}")
        hi = integer_search(eps_at, lo, hi, target=target, want="smallest").x
        return _finish_ledger(parameter, hi, make(hi), target, d, run)
    hi = start if hi is None else hi
    while eps_at(hi) > target:
        hi *= growth
        if hi > lim_hi:
            raise NotApplicableError(f"no {parameter} up to {lim_hi:g} meets epsilon={target:g}")
    if lo is None:
        lo = hi / growth
        while lo > lim_lo and eps_at(lo) <= target:
            hi, lo = lo, lo / growth
    val = target_root(eps_at, lo, hi, target=target, want="smallest", rtol=tol).x
    return _finish_ledger(parameter, val, make(val), target, d, run)


def _one(proto, T, relation=REPLACE_ONE):
    from .ledger import Accountant
    return Accountant(answer_only=True, relation=relation).compose(proto, T)


def _check_relation(relation, sampling, what: str) -> str:
    """The canonical relation; add/remove with every user reporting is refused up front
    (no finite guarantee at any parameter: the count of reports reveals presence)."""
    rel = _relation(relation)
    if rel != REPLACE_ONE and (sampling is None or getattr(sampling, "rate", 0.0) >= 1.0):
        raise NotApplicableError(f"calibrate.{what} with relation='add_or_remove_one' and "
                                 f"sampling={sampling!r}: " + everyone_reports_reason())
    return rel


_PARAMS = ("eps0", "sigma", "rounds", "n")


def _deployment(reports_per_user=1, dummies=0, honest=None) -> dict:
    """The deployment fields of ``sd.Shuffle`` given to a calibration (docs/deployments.md);
    only those set, so a plain protocol stays exactly as before."""
    d: dict = {}
    if reports_per_user != 1:
        d["reports_per_user"] = reports_per_user
    if dummies != 0:
        d["dummies"] = dummies
    if honest is not None:
        d["honest"] = honest
    return d


def entry(ledger: Accountant, index: int, parameter: str, epsilon: float, delta: float,
          **kw: Any) -> Calibration:
    """Calibrate one numeric parameter of entry ``index`` of a ledger, the others fixed.

    ``parameter``: "eps0" (LDP / k-RR entries; largest), "sigma" (Gaussian entries, or the
    noise multiplier of a central Gaussian / Laplace event; smallest), "rounds" (largest)
    or "n" (smallest number of users). Extra keywords go to ``calibrate``.
    """
    import dataclasses

    from .ledger import Accountant
    if parameter not in _PARAMS:
        raise ValueError(f"parameter must be one of {', '.join(_PARAMS)}; got {parameter!r}")
    entries = ledger.entries
    index = v.integer("index", index, lo=-len(entries), hi=len(entries) - 1)
    e = entries[index]

    def rebuild(item, rounds):
        acc = Accountant(pld_discretization=ledger.pld_discretization, answer_only=True,
                         relation=ledger.relation)
        for j, x in enumerate(entries):
            if j == index % len(entries):
                acc.compose(item, rounds, label=x.label)
            else:
                acc.compose(x.item, x.rounds, label=x.label)
        return acc

    if parameter == "rounds":
        return calibrate(lambda T: rebuild(e.item, int(T)), epsilon, delta, parameter="rounds",
                         increasing=True, discrete=True, start=1, growth=4,
                         **dict({"limits": (1, 10**7)}, **kw))
    if parameter == "n":
        if not e.is_shuffle:
            raise ValueError(f"parameter 'n' needs a shuffled entry; entry {index} is central")
        p = e.item
        return calibrate(lambda n: rebuild(dataclasses.replace(p, n=int(n)), e.rounds), epsilon,
                         delta, parameter="users", increasing=False, discrete=True,
                         **dict({"limits": (1, 10**10)}, **kw))
    if e.is_shuffle:
        m = e.item.mechanism
        if parameter == "eps0":
            if not isinstance(m, (LDP, RandomizedResponse)):
                raise ValueError(f"parameter 'eps0' needs an LDP or RandomizedResponse entry; got {m!r}")
            mk = (lambda x: rebuild(dataclasses.replace(e.item, mechanism=dataclasses.replace(m, eps0=x)),
                                    e.rounds))
            return calibrate(mk, epsilon, delta, parameter="eps0", increasing=True,
                             start=m.eps0, **dict({"limits": (1e-6, 700.0)}, **kw))
        if not isinstance(m, Gaussian):
            raise ValueError(f"parameter 'sigma' needs a Gaussian entry; got {m!r}")
        mk = (lambda x: rebuild(dataclasses.replace(e.item, mechanism=Gaussian(x)), e.rounds))
        return calibrate(mk, epsilon, delta, parameter="sigma", increasing=False,
                         start=m.sigma, **kw)
    if parameter != "sigma":
        raise ValueError(f"central entries calibrate 'sigma' (noise multiplier) or 'rounds'; got {parameter!r}")
    ev = e.item
    inner = getattr(ev, "event", None)

    def with_noise(x):
        if inner is not None:
            return type(ev)(ev.sampling_probability, type(inner)(x))
        return type(ev)(x)
    z0 = (inner or ev).noise_multiplier
    return calibrate(lambda x: rebuild(with_noise(x), e.rounds), epsilon, delta,
                     parameter="noise_multiplier", increasing=False, start=z0, **kw)



def eps0(n: int, epsilon: float, delta: float, rounds: int = 1, *, k: int | None = None,
         mechanism: Mechanism | None = None, sampling: Sampling | None = None,
         tol: float = 1e-5, relation: object = REPLACE_ONE,
         progress: Callable[[], None] | None = None, reports_per_user: int = 1,
         dummies: int = 0, honest: int | None = None) -> Calibration:
    """Largest ε0 such that the shuffle of n users meets (epsilon, delta) after ``rounds``.

    The target is a central (ε, δ) guarantee under replacement adjacency; ε and ε0 are in
    nats. The returned ε0 is on the certified side: the accountant's ε there was
    computed ≤ ``epsilon``.

    Parameters
    ----------
    n : int
        Users per round.
    epsilon, delta : float
        The target (ε > 0, δ in (0, 1)).
    rounds : int
        Adaptive rounds T ≥ 1 (default 1).
    k : int, optional
        None: any ε0-LDP randomizer (the bounds proven for all of them); k: k-ary
        randomized response (which unlocks the stronger clone bound).
    mechanism : optional
        A randomizer family given by one member, e.g. ``OUE(1.0, d=1000)``: its ε0 is the
        parameter calibrated, everything else (d, k) is kept; the blanket bound applies.
    sampling : CheckIn or WithoutReplacement, optional
        Who takes part in each round (the sampled bounds apply).
    tol : float
        Relative tolerance on ε at the answer (default 1e-5).
    relation : str or dp_accounting ``NeighboringRelation``
        "replace_one" (default) or "add_or_remove_one" (docs/relations.md): the target
        holds under this relation, certified by the bounds derived for it; add/remove
        with every user reporting is refused (no finite guarantee).
    progress : callable, optional
        Called with no argument once per accountant evaluation (a progress bar's update).
    reports_per_user, dummies, honest : optional
        A deployment (docs/deployments.md): k reports per user, D dummy reports per round,
        h honest users (the victim included); answered through its reductions.

    Returns
    -------
    Calibration
        ``float(c)`` is ε0; ``c.bound`` certifies it; ``c.runner_up`` is the bound that
        alone allows the most, ``c.runner_up_value`` what it allows.

    Examples
    --------
    >>> import shuffledp as sd
    >>> c = sd.calibrate.eps0(n=10_000, epsilon=1.0, delta=1e-6, rounds=10)
    >>> f"{c:.4f}", c.bound, c.epsilon <= 1.0
    ('2.8645', 'fmt20', True)
    """
    dep = _deployment(reports_per_user, dummies, honest)
    return _with_runner_up(_eps0, progress, n, epsilon, delta, rounds, k=k,
                           mechanism=mechanism, sampling=sampling, tol=tol, rival_tol=1e-3,
                           relation=relation, deploy=dep)


def _eps0(n, epsilon, delta, rounds=1, *, k=None, mechanism=None, sampling=None,
          tol=1e-5, relation=REPLACE_ONE, run: _Run = _PLAIN,
          deploy: dict | None = None) -> Calibration:
    if mechanism is not None:
        if k is not None:
            raise ValueError("pass at most one of k and mechanism")
        _family(mechanism, 1.0)        # fails early with the parameter's name
    n = v.integer("n", n, lo=1)
    target = v.real("epsilon", epsilon, lo=0.0, lo_open=True)
    d = v.probability("delta", delta)
    T = v.integer("rounds", rounds, lo=1)
    tol = v.real("tol", tol, lo=1e-12, hi=0.1)

    def proto(e0):
        if mechanism is not None:
            return Shuffle(_family(mechanism, e0), n, sampling=sampling, **(deploy or {}))
        return Shuffle(LDP(e0) if k is None else RandomizedResponse(e0, k=k), n,
                       sampling=sampling, **(deploy or {}))

    rel = _check_relation(relation, sampling, "eps0")

    def eps_at(e0):
        return _best(proto(e0), d, T, rel, run).epsilon

    # ε(ε0) ≥ 0 and the trivial bound gives ε ≤ T·ε0, so ε0 = target/T always works.
    lo = target / T
    # A better start from the fast girgis-ub1 (milliseconds per evaluation): whatever it
    # certifies, the accountant certifies too, so its answer is a valid lower end.
    certified = False
    try:
        if run.only not in (None, "girgis-ub1"):
            raise NotApplicableError("the runner-up alone: no shortcut through girgis-ub1")
        def ub1(e0):
            # Under another relation girgis-ub1 is refused (NotApplicableError): no shortcut.
            return ask_protocol(proto(e0), EpsilonAt(d), T, bound="girgis-ub1",
                        relation=rel).epsilon
        hi1 = lo * 2
        while ub1(hi1) <= target and hi1 < 700:
            hi1 *= 2
        r1 = target_root(ub1, hi1 / 2, hi1, target=target, want="largest", rtol=1e-3).x
        if r1 >= lo and ub1(r1) <= target:
            lo, certified = r1, True
    except (NotApplicableError, ValueError, ArithmeticError):
        pass
    if not certified and eps_at(lo) > target:   # cannot happen with a correct trivial bound
        lo = bisect(eps_at, 0.0, lo, want="largest", target=target, xtol=0.0, rtol=1e-7,
                    max_iter=100, check_end=False, geometric=True).x
    return calibrate(lambda e0: _one(proto(e0), T, rel), target, d, parameter="eps0",
                     increasing=True, lo=lo, hi=max(1.5 * lo, 1e-3), limits=(0.0, 700.0), tol=tol,
                     _run=run)


def sigma(n: int, epsilon: float, delta: float, rounds: int = 1, *,
          sampling: Sampling | None = None, tol: float = 1e-5,
          relation: object = REPLACE_ONE,
          progress: Callable[[], None] | None = None, reports_per_user: int = 1,
          dummies: int = 0, honest: int | None = None) -> Calibration:
    """Smallest Gaussian σ such that the protocol meets (epsilon, delta) after ``rounds``.

    σ is the noise per unit ℓ2 *diameter* of the inputs (replacement adjacency): for
    gradients clipped to norm C and an Opacus / dp_accounting noise multiplier z, the
    multiplier to use is z = 2σ.

    Parameters
    ----------
    n : int
        Users per round.
    epsilon, delta : float
        The target (ε > 0, δ in (0, 1)).
    rounds : int
        Adaptive rounds T ≥ 1 (default 1).
    sampling : CheckIn or WithoutReplacement, optional
        Who takes part in each round.
    tol : float
        Relative tolerance on ε at the answer (default 1e-5).
    relation : str or dp_accounting ``NeighboringRelation``
        "replace_one" (default) or "add_or_remove_one" (docs/relations.md): the target
        holds under this relation, certified by the bounds derived for it; add/remove
        with every user reporting is refused (no finite guarantee).
    progress : callable, optional
        Called with no argument once per accountant evaluation (a progress bar's update).
    reports_per_user, dummies, honest : optional
        A deployment (docs/deployments.md): k reports per user, D dummy reports per round,
        h honest users (the victim included); answered through its reductions.

    Returns
    -------
    Calibration
        ``float(c)`` is σ per unit diameter, with the bound that certifies it;
        ``c.noise_multiplier`` is the same noise as an Opacus noise multiplier (2σ).

    Examples
    --------
    >>> import shuffledp as sd
    >>> c = sd.calibrate.sigma(n=60_000, epsilon=5.0, delta=1e-5, rounds=100,
    ...                        sampling=sd.CheckIn(0.1))
    >>> f"{c:.4f}", c.bound
    ('0.9281', 'trimmed-clone-sampled')
    """
    dep = _deployment(reports_per_user, dummies, honest)
    return _with_runner_up(_sigma, progress, n, epsilon, delta, rounds, sampling=sampling,
                           tol=tol, rival_tol=1e-3, relation=relation, deploy=dep)


def _sigma(n, epsilon, delta, rounds=1, *, sampling=None, tol=1e-5,
           relation=REPLACE_ONE, run: _Run = _PLAIN, deploy: dict | None = None) -> Calibration:
    n = v.integer("n", n, lo=1)
    target = v.real("epsilon", epsilon, lo=0.0, lo_open=True)
    d = v.probability("delta", delta)
    T = v.integer("rounds", rounds, lo=1)

    def proto(s):
        return Shuffle(Gaussian(s), n, sampling=sampling, **(deploy or {}))

    rel = _check_relation(relation, sampling, "sigma")
    return calibrate(lambda s: _one(proto(s), T, rel), target, d, parameter="sigma",
                     increasing=False, start=1.0, limits=(1e-3, 1e8), tol=tol, _run=run)


def rounds(proto: Shuffle, epsilon: float, delta: float, *,
           max_rounds: int = 10**7, relation: object = REPLACE_ONE,
           progress: Callable[[], None] | None = None) -> Calibration:
    """Largest number of rounds T for which ``proto`` meets (epsilon, delta).

    Replacement adjacency; the answer is an integer with ε(T) ≤ ``epsilon`` < ε(T + 1).

    Parameters
    ----------
    proto : Shuffle
        One round.
    epsilon, delta : float
        The target (ε > 0, δ in (0, 1)).
    max_rounds : int
        Search cap (default 10⁷); reaching it is stated in ``c.note``.
    relation : str or dp_accounting ``NeighboringRelation``
        "replace_one" (default) or "add_or_remove_one" (docs/relations.md): the target
        holds under this relation, certified by the bounds derived for it; add/remove
        with every user reporting is refused (no finite guarantee).
    progress : callable, optional
        Called with no argument once per accountant evaluation (a progress bar's update).

    Returns
    -------
    Calibration
        ``float(c)`` is T.

    Examples
    --------
    >>> import shuffledp as sd
    >>> c = sd.calibrate.rounds(sd.Shuffle(sd.LDP(1.0), n=10_000), epsilon=1.0, delta=1e-6)
    >>> int(c.value), c.bound
    (241, 'fmt20')
    """
    return _with_runner_up(_rounds, progress, proto, epsilon, delta, max_rounds=max_rounds,
                           relation=relation)


def _rounds(proto, epsilon, delta, *, max_rounds=10**7, relation=REPLACE_ONE,
            run: _Run = _PLAIN) -> Calibration:
    if not isinstance(proto, Shuffle):
        raise ValueError(f"protocol must be a Shuffle(mechanism, n, sampling=None); got {proto!r}")
    target = v.real("epsilon", epsilon, lo=0.0, lo_open=True)
    d = v.probability("delta", delta)

    max_rounds = v.integer("max_rounds", max_rounds, lo=1)
    rel = _check_relation(relation, proto.sampling, "rounds")
    return calibrate(lambda T: _one(proto, int(T), rel), target, d, parameter="rounds",
                     increasing=True, discrete=True, lo=1, hi=4, growth=4,
                     limits=(1, max_rounds), _run=run)


def users(mechanism: Mechanism, epsilon: float, delta: float, rounds: int = 1, *,
          sampling: Sampling | None = None, max_users: int = 10**10,
          relation: object = REPLACE_ONE,
          progress: Callable[[], None] | None = None, reports_per_user: int = 1,
          dummies: int = 0) -> Calibration:
    """Smallest number of users n for which the shuffle of ``mechanism`` meets the target.

    Replacement adjacency; the answer is an integer with ε(n) ≤ ``epsilon`` < ε(n − 1).

    Parameters
    ----------
    mechanism : LDP, RandomizedResponse, Randomizer, Gaussian, ...
        Each user's randomizer.
    epsilon, delta : float
        The target (ε > 0, δ in (0, 1)).
    rounds : int
        Adaptive rounds T ≥ 1 (default 1).
    sampling : CheckIn or WithoutReplacement, optional
        Who takes part in each round.
    max_users : int
        Search cap (default 10¹⁰).
    relation : str or dp_accounting ``NeighboringRelation``
        "replace_one" (default) or "add_or_remove_one" (docs/relations.md): the target
        holds under this relation, certified by the bounds derived for it; add/remove
        with every user reporting is refused (no finite guarantee).
    progress : callable, optional
        Called with no argument once per accountant evaluation (a progress bar's update).
    reports_per_user, dummies : optional
        A deployment (docs/deployments.md): k reports per user, D dummy reports per round.

    Returns
    -------
    Calibration
        ``float(c)`` is n.

    Examples
    --------
    >>> import shuffledp as sd
    >>> c = sd.calibrate.users(sd.LDP(2.0), epsilon=0.5, delta=1e-6)
    >>> int(c.value), c.bound
    (1167, 'fmt20')
    """
    dep = _deployment(reports_per_user, dummies)
    return _with_runner_up(_users, progress, mechanism, epsilon, delta, rounds,
                           sampling=sampling, max_users=max_users, relation=relation,
                           deploy=dep)


def _users(mechanism, epsilon, delta, rounds=1, *, sampling=None, max_users=10**10,
           relation=REPLACE_ONE, run: _Run = _PLAIN, deploy: dict | None = None) -> Calibration:
    target = v.real("epsilon", epsilon, lo=0.0, lo_open=True)
    d = v.probability("delta", delta)
    T = v.integer("rounds", rounds, lo=1)

    rel = _check_relation(relation, sampling, "users")
    return calibrate(lambda n: _one(Shuffle(mechanism, int(n), sampling=sampling,
                                            **(deploy or {})), T, rel),
                     target, d,
                     parameter="users", increasing=False, discrete=True,
                     limits=(1, max_users), _run=run)
