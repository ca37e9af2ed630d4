"""shuffledp.interop.flower: a tiny federation on Flower's simulation engine (20 clients, 3 rounds)
whose ε after each round is sd.epsilon of the protocol, and the refusals."""

import importlib.util
import pathlib

import pytest

pytest.importorskip("flwr")
pytest.importorskip("ray")
pytest.importorskip("torch")
pytest.importorskip("sklearn")

import shuffledp as sd
from shuffledp.interop import flower as sf

EXAMPLE = pathlib.Path(sd.__file__).parent / "examples" / "flower_digits.py"


def _example():
    # Not registered in sys.modules: Ray then ships the ClientApp's functions by value.
    spec = importlib.util.spec_from_file_location("flower_digits_under_test", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _proto(n, gamma, z):
    # Written out here, not through the module: the protocol the docs promise.
    return sd.Shuffle(sd.Gaussian(z / 2), n, sampling=sd.CheckIn(gamma))


def test_tiny_federation_reports_sd_epsilon_each_round_and_learns():
    n, rounds, gamma, z, delta = 20, 3, 0.9, 0.05, 1e-5
    out = _example().run(users=n, rounds=rounds, checkin=gamma, noise_multiplier=z,
                         clip=1.0, lr=2.0, hidden=64, delta=delta, seed=0, echo=False,
                         central=False)
    hist = out["privacy"]
    assert [p.round for p in hist] == [1, 2, 3]
    assert all(p.users == n and 0 <= p.reports <= n for p in hist)
    for p in hist:
        want = sd.epsilon(_proto(n, gamma, z), delta, p.round)
        assert p.epsilon["upper, replace-one"] == float(want.epsilon)
        want_ar = sd.epsilon(_proto(n, gamma, z), delta, p.round, relation="add_or_remove_one")
        assert p.epsilon["upper, add/remove"] == float(want_ar.epsilon)
    assert hist[0].epsilon["upper, replace-one"] < hist[-1].epsilon["upper, replace-one"]
    # Test accuracy on 297 held-out digits (10 balanced classes: chance is 0.1).
    assert out["accuracy"][-1] > 0.13, out["accuracy"]


def test_accounting_matches_sd_epsilon_under_both_relations():
    # The path aggregate_train takes after each round, with finite add/remove numbers.
    from flwr.serverapp.strategy import FedAvg
    s = sf.ShuffleStrategy(FedAvg(fraction_evaluate=0.0), noise_multiplier=1.0, clip=1.0,
                           checkin=0.5, delta=1e-5, central=False)
    s.rounds = [20, 20]
    p = s.privacy()
    assert p.epsilon["upper, replace-one"] == float(sd.epsilon(_proto(20, 0.5, 1.0), 1e-5, 2))
    ar = sd.epsilon(_proto(20, 0.5, 1.0), 1e-5, 2, relation="add_or_remove_one")
    assert p.epsilon["upper, add/remove"] == pytest.approx(float(ar.epsilon), rel=0, abs=0)
    assp = sd.epsilon(_proto(20, 0.5, 1.0), 1e-5, 2, bound="liew-homogeneous")
    assert p.epsilon["estimate, replace-one"] == float(assp.epsilon)
    # A round with more clients: a ledger of two protocols, no single-protocol estimate.
    s.rounds = [20, 30]
    p = s.privacy()
    led = sd.Accountant().compose(_proto(20, 0.5, 1.0)).compose(_proto(30, 0.5, 1.0))
    assert p.epsilon["upper, replace-one"] == float(led.epsilon(1e-5).epsilon)
    assert "different numbers of clients" in p.missing["estimate, replace-one"]


@pytest.mark.parametrize("wrapper", ["DifferentialPrivacyServerSideFixedClipping",
                                     "DifferentialPrivacyClientSideFixedClipping"])
def test_central_noise_wrappers_are_refused(wrapper):
    from flwr.serverapp import strategy as st
    dp = getattr(st, wrapper)(st.FedAvg(fraction_evaluate=0.0), noise_multiplier=1.0,
                              clipping_norm=1.0, num_sampled_clients=10)
    with pytest.raises(sf.CentralNoiseError, match=wrapper):
        sf.ShuffleStrategy(dp, noise_multiplier=1.0, clip=1.0, checkin=0.5, delta=1e-5)


def test_adaptive_clipping_wrapper_is_refused():
    from flwr.serverapp import strategy as st
    dp = st.DifferentialPrivacyServerSideAdaptiveClipping(
        st.FedAvg(fraction_evaluate=0.0), noise_multiplier=0.1, num_sampled_clients=100)
    with pytest.raises(sf.CentralNoiseError, match="centrally"):
        sf.ShuffleStrategy(dp, noise_multiplier=1.0, clip=1.0, checkin=0.5, delta=1e-5)


@pytest.mark.parametrize("kw, match", [({"fraction_train": 0.5}, "fraction_train must be 1.0"),
                                       ({}, "fraction_evaluate must be 0.0")])
def test_identity_revealing_settings_are_refused(kw, match):
    from flwr.serverapp.strategy import FedAvg
    with pytest.raises(ValueError, match=match):
        sf.ShuffleStrategy(FedAvg(**kw), noise_multiplier=1.0, clip=1.0, checkin=0.5,
                           delta=1e-5)


def test_wrapping_twice_and_bad_parameters_are_refused():
    from flwr.serverapp.strategy import FedAvg
    inner = sf.ShuffleStrategy(FedAvg(fraction_evaluate=0.0), noise_multiplier=1.0, clip=1.0,
                               checkin=0.5, delta=1e-5)
    with pytest.raises(ValueError, match="accounted twice"):
        sf.ShuffleStrategy(inner, noise_multiplier=1.0, clip=1.0, checkin=0.5, delta=1e-5)
    with pytest.raises(ValueError, match="noise_multiplier"):
        sf.ShuffleMod(0.0, 1.0, 0.5)
    with pytest.raises(ValueError, match="checkin"):
        sf.ShuffleMod(1.0, 1.0, 1.5)
    with pytest.raises(ValueError, match="delta"):
        sf.ShuffleStrategy(FedAvg(fraction_evaluate=0.0), noise_multiplier=1.0, clip=1.0,
                           checkin=0.5, delta=0.0)


def test_client_mods_are_checked():
    from flwr.clientapp import ClientApp
    from flwr.clientapp.mod import fixedclipping_mod, message_size_mod
    ok = sf.ShuffleMod(1.0, 1.0, 0.5)
    sf.check_mods([ok, message_size_mod])
    sf.check_mods(ClientApp(mods=[ok]))
    with pytest.raises(sf.CentralNoiseError, match="fixedclipping_mod"):
        sf.check_mods([ok, fixedclipping_mod])
    with pytest.raises(ValueError, match="first"):
        sf.check_mods([message_size_mod, ok])
    with pytest.raises(ValueError, match="first"):
        sf.check_mods([message_size_mod])


def test_flower_is_imported_only_by_shuffledp_flower():
    import subprocess
    import sys
    code = "import sys, shuffledp; print(any(m.split('.')[0] == 'flwr' for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


@pytest.mark.slow
def test_a_client_running_another_protocol_stops_the_round():
    # In a real (tiny, torch-free) federation: the clients' ShuffleMod adds z = 2, the server
    # accounts z = 1; the clients refuse, and the server does not aggregate or go on.
    import numpy as np
    from flwr.app import Array, ArrayRecord, Message, MetricRecord, RecordDict
    from flwr.clientapp import ClientApp
    from flwr.serverapp import ServerApp
    from flwr.serverapp.strategy import FedAvg
    from flwr.simulation import run_simulation

    client = ClientApp(mods=[sf.ShuffleMod(2.0, 1.0, 1.0, seed=0)])

    @client.train()
    def train(msg, context):
        w = msg.content["arrays"].to_numpy_ndarrays()[0]
        return Message(RecordDict({"arrays": ArrayRecord({"w": Array(w + 1.0)}),
                                   "metrics": MetricRecord({"num-examples": 1})}),
                       reply_to=msg)

    strategy = sf.ShuffleStrategy(FedAvg(fraction_evaluate=0.0, min_available_nodes=3),
                                  noise_multiplier=1.0, clip=1.0, checkin=1.0, delta=1e-5,
                                  estimate=False,
                                  central=False)
    server = ServerApp()

    @server.main()
    def main(grid, context):
        strategy.start(grid, ArrayRecord({"w": Array(np.zeros(3, np.float32))}), num_rounds=2)

    with pytest.raises(RuntimeError, match="the server accounts noise_multiplier"):
        run_simulation(server_app=server, client_app=client, num_supernodes=3,
                       backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0}})
    assert strategy.rounds == [] and strategy.history == []
