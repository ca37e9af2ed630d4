"""The Opacus accountant (extra 'opacus'): a 20-step loop of a tiny model on CPU."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

import shuffledp as sd  # noqa: E402
from shuffledp.opacus import ShuffleAccountant, step_protocol  # noqa: E402


def test_twenty_step_loop_reports_the_valid_shuffle_bound():
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset
    torch.manual_seed(0)
    n, z = 400, 6.0
    x = torch.randn(n, 4)
    y = (x[:, 0] > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=40)      # sample rate 0.1
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine()
    engine.accountant = ShuffleAccountant(n_users=n)
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=z, max_grad_norm=1.0)
    steps = 0
    while steps < 20:
        for xb, yb in loader:
            if steps == 20:
                break
            opt.zero_grad()
            if len(xb):
                torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
            steps += 1
    acc = engine.accountant
    assert len(acc) == 20 and acc.history == [(z, 0.1, 20)]
    eps = acc.get_epsilon(1e-5)
    ref = sd.epsilon(sd.Shuffle(sd.Gaussian(z / 2), n=n, sampling=sd.CheckIn(0.1)), 1e-5, rounds=20)
    assert eps == ref.epsilon and acc.last_result.kind == "upper"
    # state round trip
    fresh = ShuffleAccountant(n_users=n)
    fresh.load_state_dict(acc.state_dict())
    assert fresh.history == acc.history and fresh.get_epsilon(1e-5) == eps
    with pytest.raises(ValueError, match="n_users"):
        ShuffleAccountant(n_users=n + 1).load_state_dict(acc.state_dict())


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
    assert step_protocol(2.0, 1.0, 10).mechanism.sigma == 1.0     # z/2: replacement, clip C
