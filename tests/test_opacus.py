"""Opacus (extra 'opacus'): tiny real training loops on CPU.

* a stock engine (central noise) with the ShuffleAccountant: a warning at the first step,
  and get_epsilon refuses, naming the central ε (Opacus' own RDP accountant);
* the client-side path (ShufflePrivacyEngine): the accountant's ε is sd.epsilon of
  Shuffle(Gaussian.from_noise_multiplier(z), n, CheckIn(q));
* make_private_with_epsilon: refused with a clear message on a stock engine, calibrated
  by the shuffle bound on the client-side engine — never Opacus' "Unexpected accounting
  mechanism" crash.
"""

import math
import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

import shuffledp as sd  # noqa: E402
from shuffledp.interop.opacus import (  # noqa: E402
    CentralNoiseError, CentralNoiseWarning, ClientNoiseDPOptimizer, ShuffleAccountant,
    ShufflePrivacyEngine, step_protocol)

N, Z = 400, 6.0


def _data(seed=0):
    from torch.utils.data import DataLoader, TensorDataset
    torch.manual_seed(seed)
    x = torch.randn(N, 4)
    y = (x[:, 0] > 0).long()
    return DataLoader(TensorDataset(x, y), batch_size=40)        # sample rate 0.1


def _train(model, opt, loader, steps):
    done = 0
    while done < steps:
        for xb, yb in loader:
            if done == steps:
                break
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
            done += 1


def _quiet_engine(cls, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # Opacus: "Secure RNG turned off"
        return cls(**kw)


def test_stock_engine_with_shuffle_accountant_refuses_and_names_the_central_epsilon():
    from opacus import PrivacyEngine
    from opacus.accountants import RDPAccountant
    loader = _data()
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = _quiet_engine(PrivacyEngine)
    engine.accountant = ShuffleAccountant(n_users=N)
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=Z, max_grad_norm=1.0)
    with pytest.warns(CentralNoiseWarning, match="centrally"):
        _train(model, opt, loader, 20)
    acc = engine.accountant
    assert len(acc) == 20 and acc.history == [] and acc.central_history == [(Z, 0.1, 20)]
    # what the loop must report instead: Opacus' own RDP accountant for the same steps
    ref = RDPAccountant()
    for _ in range(20):
        ref.step(noise_multiplier=Z, sample_rate=0.1)
    central = ref.get_epsilon(1e-5)
    with pytest.raises(CentralNoiseError) as err:
        engine.get_epsilon(1e-5)
    assert err.value.central_epsilon == pytest.approx(central, rel=1e-12)
    msg = str(err.value)
    assert f"{central:.4g}" in msg and "add/remove" in msg and "ShufflePrivacyEngine" in msg
    # the refusal survives a checkpoint
    fresh = ShuffleAccountant(n_users=N)
    fresh.load_state_dict(acc.state_dict())
    with pytest.raises(CentralNoiseError):
        fresh.get_epsilon(1e-5)


def test_client_side_engine_reports_sd_epsilon_of_the_same_protocol():
    loader = _data()
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = _quiet_engine(ShufflePrivacyEngine)
    assert engine.get_epsilon(1e-5) == 0.0
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=Z, max_grad_norm=1.0)
    assert isinstance(opt, ClientNoiseDPOptimizer)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CentralNoiseWarning)
        _train(model, opt, loader, 20)
    acc = engine.accountant
    assert len(acc) == 20 and acc.history == [(Z, 0.1, 20)] and acc.central_history == []
    eps = engine.get_epsilon(1e-5)
    ref = sd.epsilon(sd.Shuffle(sd.Gaussian.from_noise_multiplier(Z), n=N,
                                sampling=sd.CheckIn(0.1)), 1e-5, rounds=20)
    assert eps == ref.epsilon and acc.last_result.kind == "upper"
    # state round trip
    fresh = ShuffleAccountant(n_users=N)
    fresh.load_state_dict(acc.state_dict())
    assert fresh.history == acc.history and fresh.get_epsilon(1e-5) == eps
    with pytest.raises(ValueError, match="n_users"):
        ShuffleAccountant(n_users=N + 1).load_state_dict(acc.state_dict())


def test_client_side_noise_is_per_example():
    """m examples each adding N(0, z²C²) to their clipped gradient: the sum's noise has
    standard deviation z·C·√m per coordinate; a stock DPOptimizer's has z·C."""
    from opacus.optimizers import DPOptimizer
    m, d, z, c = 25, 20_000, 2.0, 0.5

    def noise_sd(cls):
        p = torch.nn.Parameter(torch.zeros(d))
        opt = cls(torch.optim.SGD([p], lr=1.0), noise_multiplier=z, max_grad_norm=c,
                  expected_batch_size=m, loss_reduction="sum",
                  generator=torch.Generator().manual_seed(3))
        p.grad_sample = torch.zeros(m, d)       # m examples, all-zero gradients
        opt.pre_step()
        return float(p.grad.std())

    se = 5 / math.sqrt(2 * d)                   # 5 standard errors of a sample sd, relative
    assert noise_sd(ClientNoiseDPOptimizer) == pytest.approx(z * c * math.sqrt(m), rel=se)
    assert noise_sd(DPOptimizer) == pytest.approx(z * c, rel=se)


def test_make_private_with_epsilon_never_crashes_inside_opacus():
    from opacus import PrivacyEngine
    # stock engine: refused before anything is wrapped, with what to use instead
    engine = _quiet_engine(PrivacyEngine)
    engine.accountant = ShuffleAccountant(n_users=N)
    model = torch.nn.Linear(4, 2)
    with pytest.raises(ValueError) as err:
        engine.make_private_with_epsilon(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            data_loader=_data(), target_epsilon=8.0, target_delta=1e-5, epochs=2,
            max_grad_norm=1.0)
    assert "Unexpected accounting mechanism" not in str(err.value)
    assert "ShufflePrivacyEngine" in str(err.value) and "centrally" in str(err.value)
    # client-side engine: the shuffle bound calibrates z; training to the planned number of
    # steps spends at most the target (and nearly all of it)
    engine = _quiet_engine(ShufflePrivacyEngine)
    model = torch.nn.Linear(4, 2)
    model, opt, loader = engine.make_private_with_epsilon(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=_data(), target_epsilon=8.0, target_delta=1e-5, epochs=2,
        max_grad_norm=1.0)
    z = opt.noise_multiplier
    assert z == engine.calibration.noise_multiplier == 2 * engine.calibration.value
    _train(model, opt, loader, 20)                                # 2 epochs of 10 steps
    eps = engine.get_epsilon(1e-5)
    assert eps <= 8.0 and eps > 8.0 * 0.99
    assert eps == sd.epsilon(sd.Shuffle(sd.Gaussian.from_noise_multiplier(z), n=N,
                                        sampling=sd.CheckIn(0.1)), 1e-5, rounds=20).epsilon


def test_unsupported_settings_are_refused_before_training():
    engine = _quiet_engine(ShufflePrivacyEngine)
    model = torch.nn.Linear(4, 2)
    for kw, word in (({"poisson_sampling": False}, "poisson_sampling"),
                     ({"clipping": "adaptive"}, "clipping"),
                     ({"grad_sample_mode": "ghost"}, "grad_sample_mode")):
        with pytest.raises(ValueError, match=word):
            engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                data_loader=_data(), noise_multiplier=Z, max_grad_norm=1.0, **kw)
    with pytest.raises(ValueError, match="noise_multiplier"):
        engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                            data_loader=_data(), noise_multiplier=0.0, max_grad_norm=1.0)


def test_changing_noise_is_a_ledger_and_validation():
    a = ShuffleAccountant(n_users=1000)
    for _ in range(3):
        a.step(noise_multiplier=8.0, sample_rate=0.2)
    e1 = a.get_epsilon(1e-6)
    a.step(noise_multiplier=4.0, sample_rate=0.2)
    assert a.history == [(8.0, 0.2, 3), (4.0, 0.2, 1)]
    e2 = a.get_epsilon(1e-6)
    assert e2 > e1 and len(a.last_result.entries) == 2
    with pytest.raises(ValueError, match="sample_rate"):
        a.step(noise_multiplier=1.0, sample_rate=1.5)
    with pytest.raises(ValueError, match="noise_multiplier"):
        step_protocol(0.0, 0.5, 10)
    assert step_protocol(2.0, 1.0, 10).sampling is None
    assert step_protocol(2.0, 1.0, 10).mechanism == sd.Gaussian.from_noise_multiplier(2.0)
    assert step_protocol(2.0, 1.0, 10).mechanism.sigma == 1.0     # z/2: replace-one, clip C


def test_add_remove_relation_reports_the_add_remove_bound_of_the_same_protocol():
    AR = "add_or_remove_one"
    a = ShuffleAccountant(n_users=1000, relation=AR)
    b = ShuffleAccountant(n_users=1000)
    for acc in (a, b):
        for _ in range(3):
            acc.step(noise_multiplier=8.0, sample_rate=0.2)
    p = step_protocol(8.0, 0.2, 1000)
    assert a.get_epsilon(1e-6) == sd.epsilon(p, 1e-6, 3, relation=AR).epsilon
    assert a.last_result.bound == "trimmed-clone-addremove"
    assert b.get_epsilon(1e-6) == sd.epsilon(p, 1e-6, 3).epsilon      # default unchanged
    assert b.relation == "replace_one"
    # every user reporting: no add/remove guarantee, refused at the step
    with pytest.raises(sd.NotApplicableError, match="number of reports reveals"):
        a.step(noise_multiplier=8.0, sample_rate=1.0)
    # the relation travels with the state and must match
    fresh = ShuffleAccountant(n_users=1000, relation=AR)
    fresh.load_state_dict(a.state_dict())
    assert fresh.get_epsilon(1e-6) == a.get_epsilon(1e-6)
    with pytest.raises(ValueError, match="relation"):
        ShuffleAccountant(n_users=1000).load_state_dict(a.state_dict())


def test_client_side_engine_under_add_remove():
    AR = "add_or_remove_one"
    loader = _data()
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = _quiet_engine(ShufflePrivacyEngine, relation=AR)
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=Z, max_grad_norm=1.0)
    _train(model, opt, loader, 5)
    ref = sd.epsilon(sd.Shuffle(sd.Gaussian.from_noise_multiplier(Z), n=N,
                                sampling=sd.CheckIn(0.1)), 1e-5, rounds=5, relation=AR)
    assert engine.get_epsilon(1e-5) == ref.epsilon
    assert engine.accountant.relation == AR
