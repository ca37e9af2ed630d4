"""``shuffledp fl-demo``: the federated-learning demonstration from the command line.

Registered by ``shuffledp.apps.cli.build_parser`` through ``add_cli(sub)``; torch is imported
only when the sub-command runs.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_cli"]

_HELP = """Simulate federated learning with shuffled check-in and account for it.

Every training example is one user. Each round each user checks in with probability
CHECKIN, computes its gradient on the current model, clips it to l2 norm CLIP, adds
N(0, (Z*CLIP)^2 I) with noise multiplier Z (--noise-multiplier, the Opacus unit); the
shuffler hides who sent what; the server averages the reports and takes a step of size LR.
Two modes:
  trade-off (the default on digits, or --noise-multipliers Z1,Z2,...): one run per noise
    multiplier; writes DIR/tradeoff.csv, DIR/tradeoff.png (final test accuracy against
    final epsilon, one line per accounting method: upper / estimate / central) and
    DIR/summary.md;
  one run (--noise-multiplier Z; the default on mnist): writes DIR/fl_demo.csv (round,
    test accuracy, epsilon per accounting method at DELTA at --checkpoints rounds),
    DIR/accuracy_vs_epsilon.png and DIR/summary.md, and prints the epsilon the run will
    reach at its last round before training starts.
A run whose final test accuracy stays near chance gets a warning saying what to change
(rounds, learning rate, noise, check-in rate).

Accounting (replace-one neighbours: clipped gradients are 2*CLIP apart at most, so the
per-user mechanism is Gaussian.from_noise_multiplier(Z) = Gaussian(Z/2), sigma per unit l2
diameter): the library's valid upper bound for Shuffle(Gaussian(Z/2), n, CheckIn(CHECKIN));
the homogeneous-pair estimate (not a guarantee); the same estimate under the paper's
add/remove reading Gaussian(Z) (comparison); central DP-SGD at the same noise multiplier
with a trusted server (dp_accounting, Poisson-subsampled Gaussian), add/remove and
replace-one. Needs the fl extra (torch, scikit-learn)."""


def _dataset(s: str) -> str:
    if s == "digits" or (s.startswith("mnist:") and len(s) > 6):
        return s
    raise argparse.ArgumentTypeError(f"dataset must be 'digits' or 'mnist:PATH'; got {s!r}")


#: The digits trade-off's noise multipliers: accuracy from about 0.93 down to about 0.4.
TRADEOFF_DEFAULT = (0.5, 1.0, 2.0, 4.0)


def _zs(s: str) -> list:
    try:
        return [float(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("noise multipliers must be numbers separated by "
                                         f"commas, e.g. 0.5,1,2,4; got {s!r}") from None


def add_cli(sub) -> None:
    """Add the ``fl-demo`` sub-command to an argparse sub-parsers object."""
    from .defaults import DEFAULTS
    d = DEFAULTS["digits"]
    p = sub.add_parser("fl-demo", help="federated learning with shuffled check-in: train, account, plot",
                       description=_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", type=_dataset, default="digits",
                   help="digits (scikit-learn's bundled 8x8 digits, default) or mnist:PATH "
                        "(directory with the four MNIST IDX files, optionally .gz)")
    p.add_argument("--rounds", type=int, default=None,
                   help=f"training rounds (default {d['rounds']}; mnist: 5540)")
    p.add_argument("--checkin", type=float, default=None,
                   help=f"check-in probability per user and round (default {d['checkin']}; mnist: 0.1)")
    p.add_argument("--noise-multiplier", type=float, default=None, metavar="Z",
                   help=f"noise multiplier Z: each report gets N(0, (Z*clip)^2 I), as in Opacus "
                        f"(= the library's Gaussian(Z/2) per unit diameter; default "
                        f"{d['noise_multiplier']}; mnist: 5)")
    p.add_argument("--noise-multipliers", type=_zs, default=None, metavar="Z1,Z2,...",
                   help="the trade-off: one run per noise multiplier, 3 to 5 values make a "
                        "readable figure (default on digits: "
                        f"{','.join(f'{z:g}' for z in TRADEOFF_DEFAULT)})")
    p.add_argument("--sigma", type=float, default=None, metavar="Z",
                   help="deprecated name of --noise-multiplier (it is the noise multiplier, "
                        "not the library's sigma per unit diameter)")
    p.add_argument("--clip", type=float, default=None,
                   help=f"l2 clipping norm C of each gradient (default {d['clip']}; mnist: 0.01)")
    p.add_argument("--lr", type=float, default=None,
                   help=f"server learning rate (default {d['lr']}; mnist: 50)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--delta", type=float, default=1e-5, help="delta for every epsilon (default 1e-5)")
    p.add_argument("--out", default="fl_demo", metavar="DIR", help="output directory (default fl_demo)")
    p.add_argument("--model", choices=["mlp", "cnn"], default=None,
                   help="model (default: mlp for digits, cnn for mnist)")
    p.add_argument("--hidden", type=int, default=None, help="hidden units of the last layer")
    p.add_argument("--checkpoints", type=int, default=40,
                   help="one run: the number of rounds at which epsilon and accuracy are "
                        "computed (default 40; all rounds if the run has fewer)")
    p.add_argument("--upper", choices=["fast", "best"], default="fast",
                   help="valid upper bound over the accountant's fast composition routes (RDP, "
                        "exact Gaussian; default) or every route incl. PLD (slower, a little tighter)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (default 1: no oversubscription on a shared machine)")
    p.add_argument("--fast-noise", action=argparse.BooleanOptionalAction, default=None,
                   help="draw the noise of the average once per round (same law as per-user "
                        "noise; default for mnist and for the trade-off)")
    p.set_defaults(func=_run)


def _run(a) -> int:
    from .data import IdxFormatError
    from .demo import SIGMA_DEPRECATED, run_demo
    z = a.noise_multiplier
    if a.sigma is not None:
        if z is not None:
            raise ValueError("use --noise-multiplier only (--sigma is its deprecated name); "
                             f"got --sigma {a.sigma:g} and --noise-multiplier {z:g}")
        print(f"shuffledp: warning: {SIGMA_DEPRECATED}", file=sys.stderr)
        z = a.sigma
    zs = a.noise_multipliers
    if zs is not None and z is not None:
        raise ValueError("use --noise-multiplier Z (one run) or --noise-multipliers "
                         f"Z1,Z2,... (the trade-off), not both; got {z:g} and "
                         f"{','.join(f'{x:g}' for x in zs)}")
    if zs is None and z is None and a.dataset == "digits":
        zs = list(TRADEOFF_DEFAULT)
    try:
        if zs is not None:
            from .demo import run_tradeoff
            run_tradeoff(a.dataset, a.out, noise_multipliers=zs, delta=a.delta,
                         upper=a.upper, rounds=a.rounds, checkin=a.checkin, clip=a.clip,
                         lr=a.lr, seed=a.seed, model=a.model, hidden=a.hidden,
                         threads=a.threads, fast_noise=a.fast_noise)
            return 0
        run_demo(a.dataset, a.out, delta=a.delta, n_checkpoints=a.checkpoints,
                 upper=a.upper, rounds=a.rounds, checkin=a.checkin, noise_multiplier=z,
                 clip=a.clip, lr=a.lr,
                 seed=a.seed, model=a.model, hidden=a.hidden, threads=a.threads,
                 fast_noise=a.fast_noise)
    except IdxFormatError:
        raise                                   # a ValueError: main() prints it, exit 2
    except FileNotFoundError as exc:
        raise ValueError(str(exc).strip('"')) from None
    except ImportError as exc:
        print(f"shuffledp: error: {exc}", file=sys.stderr)
        return 2
    return 0
