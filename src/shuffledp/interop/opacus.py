"""Opacus in the shuffle model, without the trap of a central-noise loop (extra ``opacus``).

The shuffle bound describes *client-side* noise: in every step each example (a user, as
in the shuffle-Gaussian paper, Liew & Takahashi arXiv:2206.09569) checks in with
probability ``sample_rate``, clips its gradient to ℓ2 norm C, adds N(0, z²C²I) to it
*itself* (z the noise multiplier), and a shuffler hides who sent which report; the server
averages the reports. Replace-one neighbours: two clipped gradients are up to 2C apart, so
a step is ``Shuffle(Gaussian.from_noise_multiplier(z), n, sampling=CheckIn(sample_rate))``
(``Gaussian(z / 2)``, σ per unit ℓ2 diameter; docs/conventions.md).

A stock Opacus ``PrivacyEngine`` adds the noise **once, centrally**, to the sum: N(0, z²C²I)
in total instead of one such draw per example. The shuffle bound says nothing about that
model; its ε is Opacus' own (add/remove neighbours, a trusted server). So:

* ``ShufflePrivacyEngine`` — a ``PrivacyEngine`` whose optimizer adds the noise per example
  (``ClientNoiseDPOptimizer``) and whose accountant is ``ShuffleAccountant``; its
  ``make_private_with_epsilon`` calibrates z with the shuffle bound (``sd.calibrate.sigma``)::

      engine = ShufflePrivacyEngine()
      model, optimizer, loader = engine.make_private(
          module=model, optimizer=optimizer, data_loader=loader,
          noise_multiplier=5.0, max_grad_norm=1.0)
      ... train as usual ...
      engine.get_epsilon(delta=1e-5)     # = sd.epsilon of the protocol above

* ``ShuffleAccountant`` attached to a stock engine sees, at the first step, that the noise
  is central: it warns (``CentralNoiseWarning``) and ``get_epsilon`` refuses
  (``CentralNoiseError``), naming the central ε (Opacus' RDP accountant) instead.
* ``relation="add_or_remove_one"`` (on ``ShuffleAccountant``, ``ShufflePrivacyEngine`` and
  ``noise_multiplier_for``) reports the add/remove bound of the same protocol — the
  relation Opacus' own ε is stated under (docs/relations.md); the default is replace-one.
  A step in which every user reports (sample rate 1) has no add/remove guarantee and is
  refused.
* ``make_private_with_epsilon`` of a stock engine carrying a ``ShuffleAccountant`` is refused
  with a message saying what to use (the accountant is registered with Opacus under the
  name ``"shuffledp"`` for exactly this).

Torch and Opacus are imported only when this module is used.
"""

from __future__ import annotations

import warnings

from opacus import PrivacyEngine
from opacus.accountants import IAccountant, RDPAccountant, register_accountant
from opacus.optimizers import DPOptimizer, DPPerLayerOptimizer
from opacus.optimizers.optimizer import _check_processed_flag, _generate_noise, _mark_as_processed

from ..core import _validate as v
from ..accounting.ledger import Accountant
from ..core.mechanisms import Gaussian
from ..core.protocols import CheckIn, Shuffle
from ..core.relations import REPLACE_ONE, refuse_everyone_reports
from ..core.relations import relation as _relation

__all__ = ["ShuffleAccountant", "ShufflePrivacyEngine", "ClientNoiseDPOptimizer",
           "ClientNoiseDPPerLayerOptimizer", "CentralNoiseError", "CentralNoiseWarning",
           "step_protocol", "noise_multiplier_for"]

#: What to use instead, in every refusal.
_USE_INSTEAD = ("For the shuffle model every example must add its own noise: use "
                "shuffledp.interop.opacus.ShufflePrivacyEngine (its optimizer clips each example to C "
                "and adds N(0, z^2 C^2 I) to it). For central noise use one of Opacus' own "
                "accountants ('rdp', 'prv'). docs/conventions.md.")


class CentralNoiseWarning(UserWarning):
    """A ShuffleAccountant is counting steps of an optimizer that adds the noise centrally."""


class CentralNoiseError(ValueError):
    """No shuffle bound for a loop whose noise is added centrally.

    ``central_epsilon`` is that loop's ε (Opacus' RDP accountant, add/remove neighbours,
    trusted server) at ``delta``.
    """

    def __init__(self, message: str, central_epsilon: float, delta: float):
        super().__init__(message)
        self.central_epsilon = central_epsilon
        self.delta = delta


def step_protocol(noise_multiplier: float, sample_rate: float, n_users: int) -> Shuffle:
    """One client-side step as a shuffled protocol: each of ``n_users`` checks in with
    probability ``sample_rate`` and adds noise multiplier z to its clipped report:
    ``Shuffle(Gaussian.from_noise_multiplier(z), n_users, CheckIn(sample_rate))``
    (no sampling when the rate is 1). The same protocol under either relation: the
    accountant's ``relation`` chooses the bound."""
    g = Gaussian.from_noise_multiplier(noise_multiplier)
    q = v.real("sample_rate", sample_rate, lo=0.0, hi=1.0, lo_open=True)
    return Shuffle(g, n=n_users, sampling=None if q == 1.0 else CheckIn(q))


def noise_multiplier_for(target_epsilon: float, target_delta: float, *, sample_rate: float,
                         steps: int, n_users: int, relation: object = REPLACE_ONE):
    """The smallest noise multiplier z whose client-side protocol (``step_protocol``) meets
    (``target_epsilon``, ``target_delta``) after ``steps`` steps, by the shuffle bound.

    Returns the ``sd.calibrate.sigma`` calibration (σ per unit diameter, certified side:
    its ε ≤ the target under ``relation``); ``.noise_multiplier`` is z = 2σ.
    """
    from ..accounting import calibrate
    q = v.real("sample_rate", sample_rate, lo=0.0, hi=1.0, lo_open=True)
    return calibrate.sigma(n_users, target_epsilon, target_delta, steps,
                           sampling=None if q == 1.0 else CheckIn(q), relation=relation)


# ------------------------------------------------------------------------------------------
# The client-side step
# ------------------------------------------------------------------------------------------
class _ClientNoise:
    """Mixin for Opacus' DPOptimizer: every example's clipped gradient gets its own
    N(0, z²C²I) before the sum (the shuffle model's local randomizer), instead of one draw
    on the sum. The sum of the m noised reports is drawn as the sum of m independent
    per-example draws (literally, through Opacus' own noise generator and secure mode);
    the average (``scale_grad``) is post-processing."""

    #: Read by ``ShuffleAccountant``: where this optimizer adds the noise.
    noise_site = "client"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._reports = 0           # examples whose clipped gradients are in summed_grad

    def clip_and_accumulate(self):
        # Count the examples of this physical batch (virtual steps accumulate several).
        self._reports += int(self._get_flat_grad_sample(self.params[0]).shape[0])
        super().clip_and_accumulate()

    def add_noise(self):
        m = self._reports
        std = self.noise_multiplier * self.max_grad_norm
        for p in self.params:
            _check_processed_flag(p.summed_grad)
            s = p.summed_grad
            if m and std:
                per_example = _generate_noise(std=std, reference=s.new_empty((m, *s.shape)),
                                              generator=self.generator,
                                              secure_mode=self.secure_mode)
                s = s + per_example.sum(0)
            p.grad = s.view_as(p)
            _mark_as_processed(p.summed_grad)
        self._reports = 0

    def zero_grad(self, set_to_none: bool = False):
        if not self._is_last_step_skipped:       # Opacus clears summed_grad then too
            self._reports = 0
        super().zero_grad(set_to_none)


class ClientNoiseDPOptimizer(_ClientNoise, DPOptimizer):
    """Opacus' ``DPOptimizer`` (flat clipping) with per-example noise (see ``_ClientNoise``)."""


class ClientNoiseDPPerLayerOptimizer(_ClientNoise, DPPerLayerOptimizer):
    """Opacus' ``DPPerLayerOptimizer`` with per-example noise: each example is clipped to
    the per-layer norms (total norm C = the ℓ2 norm of those) and adds N(0, z²C²I)."""


# ------------------------------------------------------------------------------------------
# The accountant
# ------------------------------------------------------------------------------------------
class ShuffleAccountant(IAccountant):
    """Opacus accountant reporting the shuffle model's valid upper bound for client-side
    noise (see the module docstring).

    ``get_epsilon(delta)`` returns the tightest valid *upper* bound ``sd.epsilon`` gives for
    the history (a ledger when z or the rate changed); never an estimate. The last full
    answer is kept in ``last_result``. ``step()`` called directly records a client-side
    step; steps reported by an Opacus optimizer are checked: a stock (central-noise)
    optimizer's steps are kept apart in ``central_history``, warned about, and make
    ``get_epsilon`` raise ``CentralNoiseError`` with the central ε.

    ``relation``: "replace_one" (default) or "add_or_remove_one" (or dp_accounting's
    ``NeighboringRelation``): the bound reported is the one derived for that relation, for
    the same protocol (docs/relations.md); ``last_result.relation`` states it.
    """

    def __init__(self, n_users: int, relation: object = REPLACE_ONE):
        super().__init__()
        self.n_users = v.integer("n_users", n_users, lo=1)
        self.relation = _relation(relation)
        self.central_history = []       # (z, q, steps) reported by a central-noise optimizer
        self.last_result = None

    @classmethod
    def mechanism(cls) -> str:
        return "shuffledp"

    @staticmethod
    def _record(history, z, q):
        if history and tuple(history[-1][:2]) == (z, q):
            history[-1] = (z, q, history[-1][2] + 1)
        else:
            history.append((z, q, 1))

    def step(self, *, noise_multiplier: float, sample_rate: float):
        p = step_protocol(noise_multiplier, sample_rate, self.n_users)     # validates
        if self.relation != REPLACE_ONE:
            refuse_everyone_reports(p)      # sample rate 1: no add/remove guarantee
        self._record(self.history, noise_multiplier, sample_rate)

    def get_optimizer_hook_fn(self, sample_rate: float):
        def hook_fn(optim):
            q = sample_rate * optim.accumulated_iterations
            if getattr(optim, "noise_site", "central") == "client":
                self.step(noise_multiplier=optim.noise_multiplier, sample_rate=q)
                return
            if not self.central_history:
                warnings.warn(
                    f"ShuffleAccountant is attached to {type(optim).__name__}, which adds the "
                    "noise once, centrally (one N(0, z^2 C^2 I) draw on the sum of the "
                    "clipped gradients): no shuffle bound describes this training, and "
                    "get_epsilon will refuse and give the central epsilon instead. "
                    + _USE_INSTEAD, CentralNoiseWarning, stacklevel=2)
            self._record(self.central_history, optim.noise_multiplier, q)

        return hook_fn

    def __len__(self) -> int:
        return sum(k for _, _, k in self.history) + sum(k for _, _, k in self.central_history)

    def ledger(self) -> Accountant:
        acc = Accountant(answer_only=True, relation=self.relation)
        for z, q, k in self.history:
            acc.compose(step_protocol(z, q, self.n_users), k)
        return acc

    def central_epsilon(self, delta: float) -> float:
        """ε of the central-noise steps (Opacus' ``RDPAccountant``: add/remove neighbours,
        trusted server): what such a loop has to report."""
        ref = RDPAccountant()
        ref.history = [tuple(h) for h in self.central_history]
        return float(ref.get_epsilon(v.probability("delta", delta)))

    def get_epsilon(self, delta: float, **kwargs) -> float:
        if self.central_history:
            k = sum(s for _, _, s in self.central_history)
            eps = self.central_epsilon(delta)
            zs = ", ".join(f"{z:g}" for z in dict.fromkeys(z for z, _, _ in self.central_history))
            raise CentralNoiseError(
                f"no shuffle bound for this training: {k} of its steps added the noise "
                f"centrally (stock Opacus optimizer, noise multiplier {zs}, one draw on the "
                f"sum). Its central epsilon is {eps:.4g} at delta = {delta:g} (Opacus "
                "RDPAccountant, add/remove neighbours, trusted server); report that, not a "
                "shuffle bound. " + _USE_INSTEAD, eps, delta)
        if not self.history:
            return 0.0
        self.last_result = self.ledger().epsilon(delta)
        return float(self.last_result.epsilon)

    def state_dict(self, destination=None):
        d = super().state_dict(destination)
        d["n_users"] = self.n_users
        d["relation"] = self.relation
        d["central_history"] = [tuple(h) for h in self.central_history]
        return d

    def load_state_dict(self, state_dict):
        n = state_dict.get("n_users") if state_dict else None
        if n is not None and int(n) != self.n_users:
            raise ValueError(f"state_dict n_users must equal this accountant's n_users={self.n_users}; got {n!r}")
        rel = _relation(state_dict.get("relation", REPLACE_ONE)) if state_dict else self.relation
        if rel != self.relation:
            raise ValueError(f"state_dict relation must equal this accountant's relation="
                             f"{self.relation!r}; got {rel!r} (steps accounted under one "
                             "relation do not carry over to another)")
        super().load_state_dict(state_dict)
        self.history = [tuple(h) for h in self.history]
        self.central_history = [tuple(h) for h in state_dict.get("central_history", [])]


class _RefuseCentralCalibration:
    """What Opacus' ``get_noise_multiplier(accountant="shuffledp")`` gets: a refusal.

    A stock engine's ``make_private_with_epsilon`` asks the registry for an accountant of
    its accountant's mechanism to calibrate *central* noise; the shuffle bound cannot do
    that (and must not: it would under-report)."""

    def __init__(self):
        raise ValueError(
            "make_private_with_epsilon of a stock opacus.PrivacyEngine calibrates noise "
            "that the server adds once, centrally; a ShuffleAccountant cannot calibrate or "
            "account that. Use shuffledp.interop.opacus.ShufflePrivacyEngine().make_private_with_"
            "epsilon(...) (client-side noise, calibrated by the shuffle bound), or Opacus' "
            "own accountant for central noise. docs/conventions.md.")


try:
    register_accountant("shuffledp", _RefuseCentralCalibration)
except ValueError:              # already registered (module reloaded)
    pass


# ------------------------------------------------------------------------------------------
# The engine
# ------------------------------------------------------------------------------------------
class ShufflePrivacyEngine(PrivacyEngine):
    """``opacus.PrivacyEngine`` for the shuffle model: client-side noise and the shuffle
    accountant (see the module docstring).

    ``n_users``: the number of users n (default: the dataset's length, one example per
    user). Supported: Poisson sampling (each user checks in independently), flat or
    per-layer clipping, one process; anything else is refused before the model is touched.
    ``relation``: the neighbouring relation of the accountant and of
    ``make_private_with_epsilon``'s calibration ("replace_one" default, or
    "add_or_remove_one").
    """

    def __init__(self, *, n_users: int | None = None, secure_mode: bool = False,
                 relation: object = REPLACE_ONE):
        super().__init__(accountant="rdp", secure_mode=secure_mode)
        self.n_users = None if n_users is None else v.integer("n_users", n_users, lo=1)
        self.relation = _relation(relation)
        self.accountant = None          # a ShuffleAccountant once make_private knows n
        self.calibration = None         # make_private_with_epsilon's sd.calibrate answer

    def _attach(self, data_loader, kw):
        from opacus.distributed import DifferentiallyPrivateDistributedDataParallel as DPDDP
        from torch.nn.parallel import DistributedDataParallel as DDP
        if not kw.get("poisson_sampling", True):
            raise ValueError("poisson_sampling must be True: the shuffle bound assumes every "
                             "user checks in independently each step (rate 1/len(data_loader))")
        if kw.get("clipping", "flat") not in ("flat", "per_layer"):
            raise ValueError("clipping must be 'flat' or 'per_layer' for client-side noise; "
                             f"got {kw.get('clipping')!r}")
        mode = kw.get("grad_sample_mode", "hooks")
        if "ghost" in str(mode):
            raise ValueError("grad_sample_mode must keep per-example gradients (hooks, "
                             f"functorch, ew) for client-side noise; got {mode!r}")
        if isinstance(kw.get("module"), (DPDDP, DDP)):
            raise ValueError("distributed training is not supported by ShufflePrivacyEngine")
        n = self.n_users if self.n_users is not None else len(data_loader.dataset)
        if self.accountant is None:
            self.accountant = ShuffleAccountant(n_users=n, relation=self.relation)
        elif self.accountant.n_users != n:
            raise ValueError(f"n_users must stay {self.accountant.n_users} for this engine's "
                             f"accountant; got a dataset of {n}")

    def make_private(self, *, module, optimizer, data_loader, noise_multiplier,
                     max_grad_norm, **kwargs):
        """Opacus' ``make_private`` with client-side noise; ``noise_multiplier`` is z."""
        Gaussian.from_noise_multiplier(noise_multiplier)             # validates z > 0
        self._attach(data_loader, dict(kwargs, module=module))
        return super().make_private(module=module, optimizer=optimizer,
                                    data_loader=data_loader, noise_multiplier=noise_multiplier,
                                    max_grad_norm=max_grad_norm, **kwargs)

    def make_private_with_epsilon(self, *, module, optimizer, data_loader, target_epsilon,
                                  target_delta, epochs, max_grad_norm, **kwargs):
        """The smallest noise multiplier meeting the target by the shuffle bound after
        ``epochs`` epochs (Opacus' step count: ``int(epochs / sample_rate)``), then
        ``make_private``. The calibration is kept in ``self.calibration``."""
        sample_rate = 1 / len(data_loader)
        steps = int(epochs / sample_rate)
        if self.accountant is not None and len(self.accountant) > 0:
            warnings.warn("make_private_with_epsilon with privacy budget already spent: the "
                          "noise multiplier is calibrated from zero, so the total will be "
                          "higher than the target")
        n = self.n_users if self.n_users is not None else len(data_loader.dataset)
        self.calibration = noise_multiplier_for(target_epsilon, target_delta,
                                                sample_rate=sample_rate,
                                                steps=v.integer("steps", steps, lo=1),
                                                n_users=n, relation=self.relation)
        return self.make_private(module=module, optimizer=optimizer, data_loader=data_loader,
                                 noise_multiplier=self.calibration.noise_multiplier,
                                 max_grad_norm=max_grad_norm, **kwargs)

    def _prepare_optimizer(self, *, optimizer, noise_multiplier, max_grad_norm,
                           expected_batch_size, loss_reduction="mean", distributed=False,
                           clipping="flat", noise_generator=None, grad_sample_mode="hooks",
                           **kwargs):
        if isinstance(optimizer, DPOptimizer):
            optimizer = optimizer.original_optimizer
        generator = self.secure_rng if self.secure_mode else noise_generator
        cls = ClientNoiseDPOptimizer if clipping == "flat" else ClientNoiseDPPerLayerOptimizer
        return cls(optimizer, noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm,
                   expected_batch_size=expected_batch_size, loss_reduction=loss_reduction,
                   generator=generator, secure_mode=self.secure_mode, **kwargs)

    def get_epsilon(self, delta):
        if self.accountant is None:
            return 0.0
        return self.accountant.get_epsilon(delta)
