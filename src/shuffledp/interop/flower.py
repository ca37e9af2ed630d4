"""Shuffled-DP federated learning on Flower (extra ``flower``): a client mod and a server
strategy wrapper whose ε is the shuffle model's, per round.

The protocol of one round (Liew & Takahashi, arXiv:2206.09569, Section 6; the library's
federated-learning demo, docs/fl.md): the server sends the current model to **every** one of
the n clients; each client checks in independently with probability γ (a client that does
not check in sends no report); a client that checks in trains, clips its model *update* to
ℓ2 norm C and adds N(0, z²C²I) to it itself (z the noise multiplier); a shuffler delivers the
reports to the server as an unordered multiset, without sender identities; the server
aggregates them. Replace-one neighbours: two clipped updates are up to 2C apart, so a round
is ``Shuffle(Gaussian.from_noise_multiplier(z), n, sampling=CheckIn(γ))`` — the protocol of
``shuffledp.accounting.fl.protocol`` (``Gaussian(z / 2)``, σ per unit ℓ2 diameter;
docs/conventions.md, docs/relations.md).

* ``ShuffleMod(noise_multiplier, clip, checkin)`` — the client side, a Flower mod
  (``ClientApp(mods=[ShuffleMod(...)])``, first in the list so that nothing runs after it):
  check-in, clipping, noise. It keeps only the noised model; the client's metrics (its loss
  on its own data, its number of examples) are not privatized and are not sent.
* ``ShuffleStrategy(strategy, noise_multiplier=, clip=, checkin=, delta=)`` — the server
  side, wrapping a Flower ``Strategy`` (e.g. ``FedAvg``): it tells the clients the protocol,
  does what the shuffler does (drops the non-reports, strips sender identities, shuffles),
  hands the reports to the wrapped strategy with equal weights, records every round in an
  ``sd.Accountant`` and reports ε after each round: the valid upper bound under both
  relations, the homogeneous-pair estimate, and central DP-SGD at the same z for
  comparison (``ROUND_LABELS``).
* Refusals: a wrapped strategy that adds noise centrally (Flower's
  ``DifferentialPrivacy*`` wrappers; ``CentralNoiseError``), server-side client sampling
  (the server would know who may have reported), federated evaluation (clients' metrics
  on their own data, unprivatized, with their identities), reports carrying anything the mod
  did not produce, and a client whose protocol differs from the server's.

Flower is imported only when this module is used.
"""

from __future__ import annotations

import logging
import math
import secrets
from dataclasses import dataclass, field

import numpy as np
from flwr.app import (
    Array,
    ArrayRecord,
    ConfigRecord,
    Error,
    Message,
    MessageType,
    MetricRecord,
    RecordDict,
)
from flwr.serverapp.strategy import Strategy

from ..core import _validate as v
from ..core.errors import NotApplicableError
from ..accounting.fl import central_epsilon, protocol
from ..accounting.ledger import Accountant
from ..core.relations import ADD_OR_REMOVE_ONE, REPLACE_ONE

__all__ = ["ShuffleMod", "ShuffleStrategy", "RoundPrivacy", "CentralNoiseError", "check_mods",
           "round_protocol", "ROUND_LABELS"]

_log = logging.getLogger("flwr")

#: Keys of the ConfigRecord the server sends with every training message (the protocol it
#: accounts) and of the stamp each client returns (the protocol it ran).
_PREFIX = "shuffledp-"
_Z, _C, _GAMMA, _ROUND = (_PREFIX + k for k in ("noise-multiplier", "clip", "checkin", "round"))
_STAMP = "shuffledp"                # RecordDict key of the client's stamp
_REPORT = "report"                  # stamp key: 1 a report, 0 no check-in
_ERROR_CODE = 4200                  # Flower error code of a ShuffleMod refusal (any int)

#: What each number reported after a round is: key -> (kind, relation, description).
ROUND_LABELS = {
    "upper, replace-one": (
        "upper", REPLACE_ONE, "shuffle model, valid upper bound (sd.Accountant = sd.epsilon of "
        "the rounds so far), replace-one neighbours"),
    "upper, add/remove": (
        "upper", ADD_OR_REMOVE_ONE, "shuffle model, valid upper bound, add/remove neighbours "
        "(the relation Flower's and Opacus' own accountants state)"),
    "estimate, replace-one": (
        "estimate", REPLACE_ONE, "homogeneous-pair estimate (liew-homogeneous): exact only if "
        "every other client sends the same update; not a guarantee"),
    "central, add/remove": (
        "central", ADD_OR_REMOVE_ONE, "central DP-SGD at the same noise multiplier (a trusted "
        "server adds N(0, z²C²I) once to the sum; dp_accounting PLD): another trust model, "
        "for comparison"),
    "central, replace-one": (
        "central", REPLACE_ONE, ("the same central baseline under replace-one neighbours")),
}


class CentralNoiseError(ValueError):
    """A Flower setup adds its noise centrally: no shuffle bound describes it.

    Flower's ``DifferentialPrivacyServerSideFixedClipping`` (and the other
    ``DifferentialPrivacy*`` wrappers, with their ``fixedclipping_mod`` /
    ``adaptiveclipping_mod``) add one Gaussian draw to the aggregate on a trusted server; their
    guarantee is central DP (Flower's own accountant). The Opacus counterpart is
    ``shuffledp.interop.opacus.CentralNoiseError``.
    """


def round_protocol(n: int, checkin: float, noise_multiplier: float):
    """One round as the library's protocol: ``Shuffle(Gaussian.from_noise_multiplier(z), n,
    sampling=CheckIn(γ))`` (``shuffledp.accounting.fl.protocol``, the one home of this
    conversion: replace-one neighbours put two clipped updates 2C apart)."""
    return protocol(v.integer("n", n, lo=1), _checkin(checkin),
                    _noise_multiplier(noise_multiplier))


def _noise_multiplier(z):
    return v.real("noise_multiplier", z, lo=0.0, lo_open=True)


def _checkin(g):
    return v.real("checkin", g, lo=0.0, hi=1.0, lo_open=True)


def _clip(c):
    return v.real("clip", c, lo=0.0, lo_open=True)


# ------------------------------------------------------------------------------------------
# The client side
# ------------------------------------------------------------------------------------------
class ShuffleMod:
    """Flower client mod: check in with probability ``checkin``, clip the model update to ℓ2
    norm ``clip`` (C) and add N(0, z²C²I) to it (z = ``noise_multiplier``).

    Put it **first** in ``ClientApp(mods=[ShuffleMod(...), ...])`` (Flower runs
    ``mods[0]`` outermost: it is the last to touch the reply). On a training message it:

    1. checks that the server's protocol (sent by ``ShuffleStrategy``) is its own, else
       replies with an error (the server's ε would not describe this client);
    2. draws the check-in; a client that does not check in does not train and sends no
       report (an empty reply the shuffler drops — Flower needs a reply to every message);
    3. otherwise runs the ClientApp, takes the update u = returned model − received model
       (all arrays as one vector, in float64), clips it to ‖u‖ ≤ C, adds N(0, z²C²I), and
       replies with received model + noised update (cast to the arrays' dtypes: rounding is
       post-processing), nothing else: the app's metrics are dropped, being unprivatized.

    Evaluation and query messages are refused (an error reply): a client's metrics on its own
    data, sent with its identity, are not covered by the shuffle bound.

    With seed=None (default) check-in and noise are drawn from the operating system's
    entropy, as a deployment must; an integer makes a simulation reproducible (the stream of
    each client and round is seeded by ``(seed, partition id or node id, round)``).
    """

    def __init__(self, noise_multiplier: float, clip: float, checkin: float, *,
                 seed: int | None = None):
        self.noise_multiplier = _noise_multiplier(noise_multiplier)
        self.clip = _clip(clip)
        self.checkin = _checkin(checkin)
        self.seed = None if seed is None else v.integer("seed", seed, lo=0)

    def __repr__(self):
        return (f"ShuffleMod(noise_multiplier={self.noise_multiplier:g}, clip={self.clip:g}, "
                f"checkin={self.checkin:g})")

    def _refuse(self, msg, reason):
        return Message(Error(code=_ERROR_CODE, reason=f"ShuffleMod: {reason}"), reply_to=msg)

    def _rng(self, ctxt, rnd):
        if self.seed is None:
            return np.random.default_rng()
        who = ctxt.node_config.get("partition-id", ctxt.node_id)
        return np.random.default_rng([self.seed, int(who), int(rnd)])

    def __call__(self, msg, ctxt, call_next):
        if msg.metadata.message_type != MessageType.TRAIN:
            return self._refuse(msg, f"a {msg.metadata.message_type!r} message is refused: a "
                                "client's metrics on its own data, sent with its identity, are "
                                "not covered by the shuffle bound (evaluate centrally instead)")
        cfg = next((c for c in msg.content.config_records.values() if _Z in c), None)
        if cfg is None:
            return self._refuse(msg, "the server did not send the shuffle protocol: wrap its "
                                "strategy in shuffledp.interop.flower.ShuffleStrategy")
        theirs = (float(cfg[_Z]), float(cfg[_C]), float(cfg[_GAMMA]))
        mine = (self.noise_multiplier, self.clip, self.checkin)
        if theirs != mine:
            return self._refuse(msg, "the server accounts noise_multiplier, clip, checkin = "
                                f"{theirs}, this client runs {mine}")
        rng = self._rng(ctxt, cfg[_ROUND])
        if not rng.random() < self.checkin:
            return Message(RecordDict({_STAMP: ConfigRecord({_REPORT: 0})}), reply_to=msg)
        if len(msg.content.array_records) != 1:
            return self._refuse(msg, "expected one ArrayRecord (the model) from the server; "
                                f"got {len(msg.content.array_records)}")
        sent = next(iter(msg.content.array_records.values()))
        out = call_next(msg, ctxt)
        if out.has_error():
            return out
        if len(out.content.array_records) != 1:
            return self._refuse(msg, "the ClientApp must reply with one ArrayRecord (the "
                                f"trained model); got {len(out.content.array_records)}")
        key, got = next(iter(out.content.array_records.items()))
        if list(got.keys()) != list(sent.keys()):
            return self._refuse(msg, "the ClientApp's arrays must have the server's keys "
                                f"{list(sent.keys())}; got {list(got.keys())}")
        old = sent.to_numpy_ndarrays()
        new = got.to_numpy_ndarrays()
        if any(a.shape != b.shape for a, b in zip(old, new)):
            return self._refuse(msg, "the ClientApp's arrays must have the server's shapes")
        upd = [np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
               for a, b in zip(old, new)]
        norm = math.sqrt(sum(float(np.dot(u.ravel(), u.ravel())) for u in upd))
        if not math.isfinite(norm):
            return self._refuse(msg, "the model update is not finite")
        # C / max(‖u‖, C) <= 1 scales only updates longer than C (and keeps 0 at 0).
        scale = self.clip / max(norm, self.clip)
        std = self.noise_multiplier * self.clip
        report = {k: Array(np.asarray(np.asarray(a, dtype=np.float64) + scale * u
                                      + rng.normal(0.0, std, size=u.shape), dtype=a.dtype))
                  for k, a, u in zip(sent.keys(), old, upd)}
        return Message(RecordDict({key: ArrayRecord(report),
                                   _STAMP: ConfigRecord({_REPORT: 1, _Z: self.noise_multiplier,
                                                         _C: self.clip, _GAMMA: self.checkin})}),
                       reply_to=msg)


def check_mods(mods) -> None:
    """Check a ClientApp's mods (a list, or the ``ClientApp``) for the shuffle model.

    ``ShuffleMod`` must come first (Flower runs ``mods[0]`` outermost, so a mod after it in
    the reply's path could change or add to the report) and only once; Flower's central-DP
    client mods (``fixedclipping_mod``, ``adaptiveclipping_mod``: clipping for noise a server
    adds) raise ``CentralNoiseError``.
    """
    mods = list(getattr(mods, "_mods", mods))
    for m in mods:
        name = getattr(m, "__name__", type(m).__name__)
        if name in ("fixedclipping_mod", "adaptiveclipping_mod"):
            raise CentralNoiseError(
                f"mods must not contain Flower's {name}: it clips for noise that a server adds "
                "once, centrally (central DP); in the shuffle model each client adds its own "
                "noise: use shuffledp.interop.flower.ShuffleMod (first) and ShuffleStrategy")
    ours = [i for i, m in enumerate(mods) if isinstance(m, ShuffleMod)]
    if ours != [0]:
        raise ValueError("mods must hold one ShuffleMod, first (mods[0] is the last to touch "
                         "the reply; a mod outside it could change the report); got "
                         f"ShuffleMod at positions {ours} of {len(mods)}")


# ------------------------------------------------------------------------------------------
# The server side
# ------------------------------------------------------------------------------------------
@dataclass
class RoundPrivacy:
    """The privacy after one round: ``epsilon[label]`` for the labels of ``ROUND_LABELS``
    that could be answered (``missing[label]`` says why the others could not), at ``delta``,
    after ``round`` rounds; ``users`` clients were asked this round and ``reports`` checked
    in (public: the shuffler reveals the multiset's size)."""

    round: int
    users: int
    reports: int | None
    delta: float
    epsilon: dict = field(default_factory=dict)
    missing: dict = field(default_factory=dict)
    bound: dict = field(default_factory=dict)

    def lines(self) -> list[str]:
        """One line per number, with what it is."""
        out = []
        for lab, (kind, _, desc) in ROUND_LABELS.items():
            if lab in self.epsilon:
                b = f", {self.bound[lab]}" if lab in self.bound else ""
                out.append(f"epsilon = {self.epsilon[lab]:.4g}  [{lab}{b}] {desc}")
            elif lab in self.missing:
                out.append(f"epsilon n/a  [{lab}] {self.missing[lab]}")
        return out


def _chain(strategy):
    """The strategy and every strategy it wraps (``.strategy`` attributes)."""
    seen = []
    s = strategy
    while s is not None and all(s is not t for t in seen):
        seen.append(s)
        s = getattr(s, "strategy", None)
    return seen


class ShuffleStrategy(Strategy):
    """Flower strategy wrapper for the shuffle model (see the module docstring).

    After each round the privacy is logged, appended to ``history`` and added to the
    round's training MetricRecord (``epsilon-upper-replace-one``, ...), so Flower's
    ``Result.train_metrics_clientapp`` holds it too. ``ledger(relation)`` is the
    ``sd.Accountant`` of the rounds so far; its ``epsilon(delta)`` is the ``upper`` number
    (the same as ``sd.epsilon`` of the protocol and rounds). docs/flower.md.

    Parameters
    ----------
    strategy : flwr.serverapp.strategy.Strategy
        The strategy whose sampling and aggregation run underneath, e.g. ``FedAvg(
        fraction_train=1.0, fraction_evaluate=0.0)``. It receives the round's reports in a
        random order, without sender identities, each with weight 1 under its
        ``weighted_by_key``; any aggregation of that multiset is post-processing.
    noise_multiplier, clip, checkin : float
        z, C and γ: each client's report is its update clipped to C plus N(0, z²C²I), sent
        with probability γ. The clients' ``ShuffleMod`` must hold the same three.
    delta : float
        δ of every ε reported.
    estimate, central : bool
        Also report the homogeneous-pair estimate and the central DP-SGD baseline
        (``ROUND_LABELS``; the central one needs the ``pld`` extra). Default True.
    on_round : callable, optional
        Called with each round's ``RoundPrivacy`` after its aggregation.
    """

    def __init__(self, strategy, *, noise_multiplier: float, clip: float, checkin: float,
                 delta: float, estimate: bool = True, central: bool = True, on_round=None):
        super().__init__()
        if not isinstance(strategy, Strategy):
            raise TypeError("strategy must be a flwr.serverapp.strategy.Strategy (Flower's "
                            f"message API, e.g. FedAvg()); got {type(strategy).__name__}")
        for s in _chain(strategy):
            name = type(s).__name__
            if isinstance(s, ShuffleStrategy):
                raise ValueError("strategy must not be a ShuffleStrategy already (each round "
                                 "would be accounted twice)")
            mod = type(s).__module__
            if name.startswith("DifferentialPrivacy") or (mod.startswith("flwr.")
                                                          and ".dp_" in mod):
                raise CentralNoiseError(
                    f"strategy must not be wrapped in Flower's {name}: it adds Gaussian noise "
                    "once, centrally, to the aggregate (central DP, Flower's own accountant); "
                    "no shuffle bound describes that. For the shuffle model wrap the plain "
                    "strategy (e.g. FedAvg) in ShuffleStrategy and give the clients ShuffleMod; "
                    "for central DP keep Flower's wrapper and its accountant.")
        ft = getattr(strategy, "fraction_train", 1.0)
        if ft != 1.0:
            raise ValueError(
                f"strategy.fraction_train must be 1.0; got {ft!r}: sampling clients on the "
                "server tells it who may have reported, which the check-in bound assumes "
                "hidden. Send every round to every client and let checkin sample.")
        fe = getattr(strategy, "fraction_evaluate", 0.0)
        if fe != 0.0:
            raise ValueError(
                f"strategy.fraction_evaluate must be 0.0; got {fe!r}: federated evaluation "
                "sends each client's metrics on its own data to the server, unprivatized and "
                "with its identity. Evaluate centrally (Strategy.start(evaluate_fn=...)).")
        self.strategy = strategy
        self.noise_multiplier = _noise_multiplier(noise_multiplier)
        self.clip = _clip(clip)
        self.checkin = _checkin(checkin)
        self.delta = v.probability("delta", delta)
        self.estimate = bool(estimate)
        self.central = bool(central)
        self.on_round = on_round
        self.rounds = []            # users asked in each aggregated round
        self.history = []           # RoundPrivacy after each round
        self._asked = {}            # server round -> (users asked, model keys)

    def summary(self) -> None:
        _log.info("\t├──> shuffle model: each client checks in w.p. %g, clips its update to "
                  "C = %g, adds N(0, (%g C)^2 I); delta = %g", self.checkin, self.clip,
                  self.noise_multiplier, self.delta)
        self.strategy.summary()

    # ----- accounting ----------------------------------------------------------------
    def ledger(self, relation: object = REPLACE_ONE) -> Accountant:
        """The ``sd.Accountant`` of the rounds aggregated so far under ``relation``."""
        acc = Accountant(answer_only=True, relation=relation)
        for n in self.rounds:
            acc.compose(round_protocol(n, self.checkin, self.noise_multiplier))
        return acc

    def privacy(self, reports: int | None = None) -> RoundPrivacy:
        """Every number of ``ROUND_LABELS`` after the rounds so far (``reports``: how many
        reports the last round had, if known)."""
        t, d = len(self.rounds), self.delta
        rp = RoundPrivacy(t, self.rounds[-1] if t else 0, reports, d)
        for lab, rel in (("upper, replace-one", REPLACE_ONE),
                         ("upper, add/remove", ADD_OR_REMOVE_ONE)):
            try:
                r = self.ledger(rel).epsilon(d)
            except (NotApplicableError, ArithmeticError) as exc:
                rp.missing[lab] = f"not available: {exc}"
                continue
            if r.kind != "upper":       # pragma: no cover - a ledger answers with uppers only
                raise ArithmeticError(f"the ledger answered with a {r.kind}, not an upper bound")
            rp.epsilon[lab] = float(r.epsilon)
            rp.bound[lab] = " + ".join(dict.fromkeys(e.bound for e in r.entries))
        same = len(set(self.rounds)) == 1
        if self.estimate:
            lab = "estimate, replace-one"
            if not same:
                rp.missing[lab] = "not available: the rounds had different numbers of clients"
            else:
                import shuffledp as sd
                try:
                    e = sd.epsilon(round_protocol(self.rounds[0], self.checkin,
                                                  self.noise_multiplier), d, t,
                                   bound="liew-homogeneous")
                    rp.epsilon[lab], rp.bound[lab] = float(e.epsilon), e.bound
                except (NotApplicableError, ArithmeticError) as exc:
                    rp.missing[lab] = f"not available: {exc}"
        if self.central:
            for lab, rep in (("central, add/remove", False), ("central, replace-one", True)):
                try:
                    rp.epsilon[lab] = central_epsilon(self.checkin, self.noise_multiplier, t, d, rep)
                    rp.bound[lab] = "dp_accounting-pld"
                except ImportError:
                    rp.missing[lab] = ("not available: install dp-accounting (pip install "
                                       "'shuffledp[pld]')")
        return rp

    # ----- training ------------------------------------------------------------------
    def configure_train(self, server_round, arrays, config, grid):
        config[_Z] = self.noise_multiplier
        config[_C] = self.clip
        config[_GAMMA] = self.checkin
        config[_ROUND] = int(server_round)
        before = set(grid.get_node_ids())
        msgs = list(self.strategy.configure_train(server_round, arrays, config, grid))
        # Clients that connect while the round is configured may or may not be in it; every
        # client connected before must be: n is the number addressed.
        after = set(grid.get_node_ids())
        dst = [m.metadata.dst_node_id for m in msgs]
        if len(dst) != len(set(dst)) or not before <= set(dst) <= after:
            raise ValueError(
                f"every round must go to every client once: the wrapped strategy addressed "
                f"{len(set(dst))} of {len(after)} clients ({len(dst)} messages). Sampling on "
                "the server tells it who may have reported, which the check-in bound assumes "
                "hidden; use fraction_train=1.0 (and min_available_nodes to wait for the "
                "clients) and let checkin sample.")
        self._asked[server_round] = (len(dst), list(arrays.keys()))
        return msgs

    def _shuffled(self, server_round, replies):
        """What the shuffler delivers: the reports' models in a random order, checked."""
        asked, keys = self._asked.pop(server_round)
        replies = list(replies)
        errors = [m.error.reason for m in replies if m.has_error()]
        if errors or len(replies) != asked:
            raise RuntimeError(
                f"round {server_round}: {asked} clients were asked, {len(replies)} replied, "
                f"{len(errors)} with an error ({'; '.join(sorted(set(errors)))[:500]}). A "
                "client that fails after checking in changes the protocol the bound is for; "
                "the round is not aggregated.")
        reports = []
        mine = {_Z: self.noise_multiplier, _C: self.clip, _GAMMA: self.checkin}
        for m in replies:
            c = m.content
            stamp = c.config_records.get(_STAMP) if _STAMP in c else None
            if stamp is None:
                raise ValueError("a client replied without ShuffleMod's stamp: every client "
                                 "must run ClientApp(mods=[ShuffleMod(...), ...])")
            extra = sorted(k for k in c if k != _STAMP)
            if not stamp[_REPORT]:
                if extra:
                    raise ValueError(f"a client that did not check in sent records {extra}: "
                                     "it must send nothing (ShuffleMod first in mods)")
                continue
            if any(float(stamp[k]) != x for k, x in mine.items()):
                raise ValueError("a client's report was made with "
                                 f"{ {k: stamp[k] for k in mine} }, not the accounted {mine}")
            if len(extra) != 1 or extra[0] not in c.array_records:
                raise ValueError(
                    f"a report must hold the noised model and nothing else; got records "
                    f"{extra}: metrics or other records are not privatized (a mod that runs "
                    "after ShuffleMod adds them: put ShuffleMod first in mods)")
            ar = c.array_records[extra[0]]
            if list(ar.keys()) != keys:
                raise ValueError(f"a report's arrays must have the model's keys {keys}; got "
                                 f"{list(ar.keys())}")
            reports.append(ar)
        secrets.SystemRandom().shuffle(reports)
        return asked, reports

    def aggregate_train(self, server_round, replies):
        asked, reports = self._shuffled(server_round, replies)
        # The round is spent once the clients have answered, whatever the aggregate.
        self.rounds.append(asked)
        arrays, metrics = None, None
        if reports:
            akey = getattr(self.strategy, "arrayrecord_key", "arrays")
            wkey = getattr(self.strategy, "weighted_by_key", "num-examples")
            # New messages: no sender identity, equal weights fixed by the server.
            anon = [Message(RecordDict({akey: ar, "metrics": MetricRecord({wkey: 1})}),
                            dst_node_id=0, message_type=MessageType.TRAIN) for ar in reports]
            arrays, metrics = self.strategy.aggregate_train(server_round, anon)
        rp = self.privacy(len(reports))
        self.history.append(rp)
        metrics = MetricRecord() if metrics is None else metrics
        for lab, e in rp.epsilon.items():
            if math.isfinite(e):
                metrics["epsilon-" + lab.replace(", ", "-").replace("/", "-or-")] = e
        metrics["shuffle-reports"] = len(reports)
        _log.info("shuffle round %d: %d of %d clients reported; privacy at delta = %g:",
                  server_round, len(reports), asked, self.delta)
        for line in rp.lines():
            _log.info("\t%s", line)
        if self.on_round is not None:
            self.on_round(rp)
        return arrays, metrics

    # ----- evaluation: central only ------------------------------------------------------
    def configure_evaluate(self, server_round, arrays, config, grid):
        msgs = list(self.strategy.configure_evaluate(server_round, arrays, config, grid))
        if msgs:
            raise ValueError(
                "the wrapped strategy sent evaluation messages: federated evaluation sends "
                "each client's metrics on its own data to the server, unprivatized and with "
                "its identity; set fraction_evaluate=0.0 and evaluate centrally")
        return []

    def aggregate_evaluate(self, server_round, replies):
        return None
