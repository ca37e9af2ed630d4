"""Central baselines for the learning setting (gaussian.md §5), via dp_accounting."""

import pytest

from shuffledp.baselines import central_baselines


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
