"""Central baselines for the learning setting (gaussian.md §5), via dp_accounting."""

import pytest

from shuffledp.accounting.baselines import central_baselines


def test_central_baselines_match_the_spec():
    pytest.importorskip("dp_accounting")
    b = central_baselines()
    # spec/gaussian.md §5: RDP 7.4685, PLD 6.9154 (dp_accounting, computed by the spec authors)
    assert abs(b["rdp"] - 7.4685) < 5e-4
    assert abs(b["pld"] - 6.9154) < 5e-3
    assert b["pld"] <= b["rdp"]


def test_central_baselines_bad_input():
    with pytest.raises(ValueError, match="sigma"):
        central_baselines(sigma=0.0)
    with pytest.raises(ValueError, match="q"):
        central_baselines(q=1.5)


@pytest.mark.parametrize("sigma,steps,delta", [(2.0, 100, 1e-8), (5.0, 5540, 1 / 60000),
                                               (1.0, 10, 1e-5)])
def test_unsampled_central_baseline_without_dp_accounting(sigma, steps, delta):
    """q = 1: the composed Gaussian in closed form. Its PLD column is the exact ε (checked
    here by the analytic formula in 40 digits), its RDP column at most dp_accounting's RDP
    accountant's (a finer order grid) and at least the exact ε."""
    import mpmath as mp
    from shuffledp.accounting.baselines import central_gaussian_unsampled
    b = central_gaussian_unsampled(sigma, steps, delta)
    mp.mp.dps = 40
    mu = mp.sqrt(steps) / sigma
    e = mp.mpf(b["pld"])
    d_at = mp.ncdf(-e / mu + mu / 2) - mp.e ** e * mp.ncdf(-e / mu - mu / 2)
    assert d_at <= delta * (1 + 1e-9)                     # certified: δ(ε) ≤ δ there
    e2 = e * (1 - mp.mpf("1e-9"))
    assert mp.ncdf(-e2 / mu + mu / 2) - mp.e ** e2 * mp.ncdf(-e2 / mu - mu / 2) > delta
    assert b["pld"] <= b["rdp"]
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant as rdp
    acc = rdp.RdpAccountant()
    acc.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma), steps))
    assert b["rdp"] <= acc.get_epsilon(delta) * (1 + 1e-9)
    assert b["rdp"] >= 0.99 * acc.get_epsilon(delta)
