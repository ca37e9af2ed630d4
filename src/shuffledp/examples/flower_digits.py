"""Shuffled-DP federated learning on Flower's simulation engine: digits, one client per user.

The protocol of the library's federated-learning demo (shuffledp fl-demo; docs/fl.md), run
as a Flower federation: each of the 1500 clients holds one 8x8 digit of scikit-learn's
bundled data; every round the server sends the model to all clients, each checks in with
probability gamma, and one that does takes one gradient step on its example (lr 1), clips
the update to norm C and adds N(0, z^2 C^2 I) to it (shuffledp.flower.ShuffleMod); the
shuffled reports are averaged (FedAvg inside shuffledp.flower.ShuffleStrategy). After every
round it prints the test accuracy (central evaluation on the 297 held-out digits) and
epsilon: the valid upper bound under replace-one and add/remove neighbours (= sd.epsilon of
the protocol and rounds so far), the homogeneous-pair estimate, and central DP-SGD at the
same z for comparison. Flower's simulation engine runs on Ray: about 15-20 s per round for
1500 clients on 2 CPU cores (docs/flower.md).

Run (needs the extras 'flower' and 'fl': flwr[simulation], torch, scikit-learn):

    shuffledp example flower_digits > flower_digits.py && python flower_digits.py --rounds 80
"""

import argparse
import logging
import time
import warnings

_DATA = {}


def _digits():
    # Once per process (the server and each Ray worker): the demo's fixed split.
    if "d" not in _DATA:
        from shuffledp.apps.fl.data import load_digits
        _DATA["d"] = load_digits()
    return _DATA["d"]


def _model(seed, hidden):
    import torch

    from shuffledp.apps.fl.sim import make_model
    d = _digits()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return make_model("mlp", tuple(d.x_train.shape[1:]), d.classes, hidden)


def client_app(noise_multiplier, clip, checkin, lr, hidden, seed=None):
    """The users' ClientApp: one SGD step on the user's one example, then ShuffleMod."""
    import torch
    from flwr.app import ArrayRecord, Message, MetricRecord, RecordDict
    from flwr.clientapp import ClientApp

    from shuffledp.flower import ShuffleMod, check_mods

    mods = [ShuffleMod(noise_multiplier, clip, checkin, seed=seed)]
    check_mods(mods)
    app = ClientApp(mods=mods)

    @app.train()
    def train(msg, context):
        d = _digits()
        i = int(context.node_config["partition-id"])        # client i = user i
        model = _model(0, hidden)
        model.load_state_dict(msg.content["arrays"].to_torch_state_dict())
        x = torch.from_numpy(d.x_train[i:i + 1].copy())
        y = torch.from_numpy(d.y_train[i:i + 1].copy())
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        # ShuffleMod clips (new - old) to C, adds the noise and drops these metrics.
        return Message(RecordDict({"arrays": ArrayRecord(model.state_dict()),
                                   "metrics": MetricRecord({"num-examples": 1})}),
                       reply_to=msg)

    return app


def run(users=None, rounds=80, checkin=0.5, noise_multiplier=1.0, clip=1.0, lr=1.0,
        delta=1e-5, hidden=16, seed=0, echo=True, central=True):
    """Run the federation; returns {"accuracy": [...], "privacy": [RoundPrivacy, ...],
    "seconds": wall time, "users": n}."""
    import torch
    from flwr.app import ArrayRecord, MetricRecord
    from flwr.serverapp import ServerApp
    from flwr.serverapp.strategy import FedAvg
    from flwr.simulation import run_simulation

    from shuffledp.flower import ShuffleStrategy

    d = _digits()
    n = d.n if users is None else int(users)
    xte, yte = torch.from_numpy(d.x_test), torch.from_numpy(d.y_test)
    out = {"accuracy": [], "privacy": [], "users": n}

    def evaluate(rnd, arrays):
        model = _model(0, hidden)
        model.load_state_dict(arrays.to_torch_state_dict())
        with torch.no_grad():
            acc = float((model(xte).argmax(1) == yte).float().mean())
        out["accuracy"].append(acc)
        if echo:
            p = out["privacy"][-1] if rnd and out["privacy"] else None
            eps = ("" if p is None else "  epsilon: " + ", ".join(
                f"{p.epsilon[k]:.4g} ({k})" for k in p.epsilon) + f"  [{p.reports}/{p.users} "
                "reported]")
            print(f"round {rnd:3d}  accuracy {acc:.4f}{eps}", flush=True)
        return MetricRecord({"accuracy": acc})

    strategy = ShuffleStrategy(
        FedAvg(fraction_train=1.0, fraction_evaluate=0.0, min_available_nodes=n),
        noise_multiplier=noise_multiplier, clip=clip, checkin=checkin, delta=delta,
        central=central, on_round=out["privacy"].append)
    server = ServerApp()

    @server.main()
    def main(grid, context):
        strategy.start(grid, ArrayRecord(_model(seed, hidden).state_dict()), num_rounds=rounds,
                       evaluate_fn=evaluate)

    if echo:
        print(f"{n} clients (one digit each), {rounds} rounds; each round a client checks in "
              f"w.p. {checkin:g}, clips its update to C = {clip:g} and adds N(0, (z C)^2 I), "
              f"z = {noise_multiplier:g} (per-user mechanism Gaussian.from_noise_multiplier("
              f"{noise_multiplier:g}) = Gaussian({noise_multiplier / 2:g}) per unit l2 "
              f"diameter); epsilon at delta = {delta:g}", flush=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)     # Ray's accelerator-env tip
        run_simulation(server_app=server,
                       client_app=client_app(noise_multiplier, clip, checkin, lr, hidden, seed),
                       num_supernodes=n,
                       backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0}})
    out["seconds"] = time.perf_counter() - t0
    if len(out["privacy"]) != rounds:
        raise RuntimeError(f"the federation stopped after {len(out['privacy'])} of {rounds} "
                           "rounds (see Flower's log above)")
    if echo:
        print(f"final test accuracy {out['accuracy'][-1]:.4f} after {rounds} rounds; "
              f"wall time {out['seconds']:.0f} s", flush=True)
        for line in out["privacy"][-1].lines():
            print("  " + line)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=None, help="clients (default: all 1500)")
    p.add_argument("--rounds", type=int, default=80)
    p.add_argument("--checkin", type=float, default=0.5, help="check-in probability gamma")
    p.add_argument("--noise-multiplier", type=float, default=1.0, help="z")
    p.add_argument("--clip", type=float, default=1.0, help="C")
    p.add_argument("--lr", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=0, help="model initialisation and, for a "
                   "reproducible simulation, the clients' check-in and noise")
    p.add_argument("--verbose", action="store_true", help="Flower's INFO log too")
    a = p.parse_args(argv)
    if not a.verbose:
        import flwr.serverapp  # noqa: F401  (Flower sets its logger's level on import)
        logging.getLogger("flwr").setLevel(logging.WARNING)
    run(a.users, a.rounds, a.checkin, a.noise_multiplier, a.clip, a.lr, a.delta, seed=a.seed)


if __name__ == "__main__":
    main()
