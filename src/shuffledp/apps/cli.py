"""Command line: ``shuffledp epsilon | delta | rdp | bounds | calibrate | report | figure | sweep``.

Human output is a table of every applicable bound with the chosen one marked; ``--json``
prints one JSON object on stdout. Errors go to stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..accounting import accountant
from ..core._progress import Progress
from ..core.mechanisms import Gaussian, LDP, Randomizer, RandomizedResponse
from ..core.protocols import CheckIn, Shuffle, WithoutReplacement
from ..core.spec import ENCODER_TYPES
from ..numerics import keep_freed_memory

__all__ = ["main", "build_parser", "protocol_from_args", "json_output", "add_deployment_flags"]

#: The neighbouring relation of every number the commands print (the ledger file's word).
RELATION_ID = "replace-one"


ADJACENCY_HELP = (
    "Neighbouring datasets differ in one user's input (replace-one neighbours). Gaussian "
    "noise in either unit: --noise-multiplier Z (or gaussian-nm:Z) is the Opacus / "
    "dp_accounting noise multiplier, N(0, Z^2 C^2 I) on inputs clipped to l2 norm C; "
    "gaussian:SIGMA is the noise per unit l2 diameter of the inputs. Clipped inputs have "
    "diameter 2C, so --noise-multiplier 5 = gaussian-nm:5 = gaussian:2.5.")

MATRIX_HELP = (
    "matrix:FILE is a randomizer given as a CSV or JSON file: one row per input value, one "
    "column per output, each row a probability distribution. CSV may start with a header "
    "row; JSON is a list of rows or {\"matrix\": [[...], ...]}.")


def json_output(a, result: dict, protocol: Shuffle | None = None) -> str:
    """One JSON object: the answer plus what it answers — the inputs as parsed (and the
    protocol they describe), the neighbouring relation and the package version — so a
    saved file says what it is without the command line that made it."""
    inputs = {"command": a.cmd}
    inputs.update({k: v for k, v in vars(a).items()
                   if k not in ("cmd", "func", "json", "details") and not callable(v)})
    if protocol is not None:
        inputs["protocol"] = _protocol_inputs(protocol)
    out = dict(result)
    rel = RELATION_ID
    if str(out.get("relation", "")).startswith("add_or_remove_one") or \
            getattr(a, "relation", None) == "add_or_remove_one":
        # An add/remove answer is never labelled replace-one (docs/relations.md).
        rel = "add_or_remove_one"
    if "relation" in out and out["relation"] != rel:
        out["relation_text"] = out["relation"]
    out.update({"inputs": inputs, "relation": rel, "version": version_text()})
    from ..core.results import jsonable
    return json.dumps(jsonable(out), default=str)


def _protocol_inputs(p: Shuffle) -> dict:
    import dataclasses
    m = p.mechanism
    mech = {"type": type(m).__name__}
    mech.update({f.name: getattr(m, f.name) for f in dataclasses.fields(m)})
    if isinstance(p.sampling, CheckIn):
        sampling = {"checkin": p.sampling.rate}
    elif isinstance(p.sampling, WithoutReplacement):
        sampling = {"sample_size": p.sampling.size}
    else:
        sampling = None
    out = {"n": p.n, "mechanism": mech, "sampling": sampling}
    if p.is_deployment:
        out.update(reports_per_user=p.reports_per_user, dummies=p.dummies, honest=p.honest)
        if p.dummy_distribution is not None:
            d = p.dummy_distribution
            out["dummy_distribution"] = d if isinstance(d, str) else list(d)
    return out


def version_text() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
        try:
            return version("shuffledp")
        except PackageNotFoundError:
            pass
    except ImportError:  # pragma: no cover
        pass
    from .. import __version__
    return __version__


class _Version(argparse.Action):
    """``--version``: argparse's "version" action with the text found when the flag is
    given, not when the parser is built (``version_text`` imports importlib.metadata and
    reads the installed package's metadata: 20-30 ms on every start otherwise)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0,
                         help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"shuffledp {version_text()}\n")     # stdout, as argparse's
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as 'shuffledp: error: ...' with exit status 2, and
    suggests the closest sub-command or flag for a misspelt one.

    Abbreviations are off: with them ``--eps 1`` was silently read as ``--eps0 1``
    (``--epsilon`` in another command), a different question answered without a word."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"shuffledp: error: {message}{_did_you_mean(self, message)}", file=sys.stderr)
        raise SystemExit(2)


def _did_you_mean(parser, message: str) -> str:
    import difflib
    import re
    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m:
        choices = re.findall(r"'?([\w-]+)'?", m.group(2))
        close = difflib.get_close_matches(m.group(1), choices, n=1)
        return f"; did you mean '{close[0]}'?" if close else ""
    m = re.search(r"unrecognized arguments: (.*)", message)
    if not m:
        return ""
    flags = [o for a in parser._actions for o in a.option_strings]
    for a in parser._actions:            # the sub-command's own flags
        if isinstance(a, argparse._SubParsersAction):
            argv = sys.argv[1:] if _ARGV is None else _ARGV
            cmd = next((x for x in argv if x in a.choices), None)
            if cmd:
                flags += [o for b in a.choices[cmd]._actions for o in b.option_strings]
    hints = []
    for word in m.group(1).split():
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=")[0], flags, n=1, cutoff=0.6)
            if close:
                hints.append(f"'{close[0]}' for '{word}'")
    return f"; did you mean {', '.join(hints)}?" if hints else ""


_ARGV = None   # the argv main() is parsing (for the flag suggestions)


def _load_matrix(path: str):
    """Read a randomizer matrix; every error names the file and, for CSV, the line."""
    import csv
    import pathlib

    try:
        raw = pathlib.Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"matrix file {path!r} cannot be read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"matrix file {path!r} is not UTF-8 text (byte {exc.start}); save it "
                         "as a UTF-8 CSV or JSON file") from None
    if path.lower().endswith(".json") or text.lstrip().startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"matrix file {path!r}, line {exc.lineno}, column {exc.colno}: "
                             f"not valid JSON ({exc.msg})") from None
        if isinstance(data, dict):
            if "matrix" not in data:
                raise ValueError(f"matrix file {path!r}: a JSON object must have the key "
                                 f"'matrix'; got keys {sorted(data)}")
            data = data["matrix"]
        if not (isinstance(data, list) and data and all(isinstance(r, list) for r in data)):
            raise ValueError(f"matrix file {path!r}: expected a JSON list of rows (one per "
                             "input), each a list of output probabilities")
        for i, row in enumerate(data):
            for j, x in enumerate(row):
                if isinstance(x, bool) or not isinstance(x, (int, float)):
                    raise ValueError(f"matrix file {path!r}: row {i + 1}, column {j + 1}: "
                                     f"expected a number; got {x!r}")
        return data
    rows = []
    for lineno, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [x.strip() for x in row]
        if not any(cells):
            continue
        vals = []
        for col, x in enumerate(cells, start=1):
            if not x:
                continue
            try:
                vals.append(float(x))
            except ValueError:
                vals = None
                if rows or lineno > 1:
                    raise ValueError(f"matrix file {path!r}, line {lineno}, column {col}: "
                                     f"not a number: {x!r}") from None
                break                       # a header on the first line
        if vals is not None:
            rows.append(vals)
    if not rows:
        raise ValueError(f"matrix file {path!r} has no rows of numbers")
    return rows


def mechanism_from_spec(spec: str, eps0):
    """Parse ``ldp``, ``rr:K``, ``oue:D``, ``rappor:D``, ``hr:D``, ``olh:D``,
    ``gaussian:SIGMA`` (σ per unit ℓ2 diameter), ``gaussian-nm:Z`` (noise multiplier Z for
    inputs clipped to norm C: ``Gaussian.from_noise_multiplier(Z)``) or ``matrix:FILE``."""
    kind, _, arg = spec.partition(":")
    kind = kind.strip().lower()
    if kind in ("gaussian-nm", "gaussian_nm"):
        if not arg:
            raise ValueError("mechanism gaussian-nm:Z needs the noise multiplier, e.g. "
                             "gaussian-nm:5; got 'gaussian-nm'")
        try:
            z = float(arg)
        except ValueError:
            raise ValueError(f"noise_multiplier must be a real number > 0; got {arg!r}") from None
        return Gaussian.from_noise_multiplier(z)
    if kind in ("gaussian", "gauss"):
        if not arg:
            raise ValueError("mechanism gaussian:SIGMA needs sigma, e.g. gaussian:5; got 'gaussian'")
        try:
            sigma = float(arg)
        except ValueError:
            raise ValueError(f"sigma must be a real number > 0; got {arg!r}") from None
        return Gaussian(sigma)
    if kind == "matrix":
        if not arg:
            raise ValueError("mechanism matrix:FILE needs a CSV or JSON file path")
        m = _load_matrix(arg)
        try:
            return Randomizer(m, eps0=eps0)
        except ValueError as exc:
            raise ValueError(f"matrix file {arg!r}: {exc}") from None
    if eps0 is None:
        raise ValueError(f"--eps0 is required for mechanism {spec!r}")
    if kind == "ldp":
        return LDP(eps0)
    enc = _encoder_from_spec(kind, arg, eps0)
    if enc is not None:
        return enc
    if kind in ("rr", "krr"):
        try:
            k = int(arg) if arg else 2
        except ValueError:
            raise ValueError(f"k must be an integer in [2, inf); got {arg!r}") from None
        return RandomizedResponse(eps0, k=k)
    import difflib
    close = difflib.get_close_matches(kind, _MECHANISM_KINDS, n=1)
    hint = f"; did you mean '{close[0]}:{arg}'?" if close and arg else (
        f"; did you mean '{close[0]}'?" if close else "")
    raise ValueError("mechanism must be one of ldp, rr:K, oue:D, rappor:D, hr:D, olh:D, "
                     f"gaussian:SIGMA, gaussian-nm:Z, matrix:FILE; got {spec!r}{hint}")


# The encoders' spellings are the ledger files' (``spec.ENCODER_TYPES``): one table.
_ENCODER_SPECS = ENCODER_TYPES

#: Every mechanism kind mechanism_from_spec accepts (for "did you mean").
_MECHANISM_KINDS = ["ldp", "rr", "krr", "gaussian", "gauss", "gaussian-nm", "matrix",
                    *_ENCODER_SPECS]


def _encoder_from_spec(kind, arg, eps0):
    """``oue:D``, ``rappor:D`` (symmetric unary encoding), ``hr:D``, ``olh:D`` (binary local
    hashing) on a domain of D values; None for other kinds."""
    if kind not in _ENCODER_SPECS:
        return None
    if not arg:
        raise ValueError(f"mechanism {kind}:D needs the domain size D, e.g. {kind}:1000")
    try:
        d = int(float(arg)) if float(arg).is_integer() else arg
    except ValueError:
        raise ValueError(f"d must be an integer in [2, inf); got {arg!r}") from None
    return _ENCODER_SPECS[kind](eps0, d)


def _as_flag(exc: ValueError, internal: str, flag: str) -> ValueError:
    """The library's error about ``internal`` (e.g. 'rate'), reworded for the flag the
    user typed (e.g. '--checkin'): the message names what they can change."""
    msg = str(exc)
    return ValueError(flag + msg[len(internal):] if msg.startswith(internal + " ") else msg)


def sampling_from_args(a) -> CheckIn | WithoutReplacement | None:
    """The sampling of ``--checkin RATE`` / ``--sample-size M`` (errors name the flag)."""
    checkin, size = getattr(a, "checkin", None), getattr(a, "sample_size", None)
    if checkin is not None and size is not None:
        raise ValueError("use at most one of --checkin and --sample-size")
    try:
        if checkin is not None:
            return CheckIn(checkin)
    except ValueError as exc:
        raise _as_flag(exc, "rate", "--checkin") from None
    try:
        return WithoutReplacement(size) if size is not None else None
    except ValueError as exc:
        raise _as_flag(exc, "size", "--sample-size") from None


def protocol_from_args(a) -> Shuffle:
    mech = mechanism_from_spec(_mechanism_spec(a), a.eps0)
    sampling = sampling_from_args(a)
    try:
        return Shuffle(mech, n=a.n, sampling=sampling,
                       reports_per_user=getattr(a, "reports_per_user", 1),
                       dummies=getattr(a, "dummies", 0), honest=getattr(a, "honest", None),
                       dummy_distribution=_dummy_distribution_arg(
                           getattr(a, "dummy_distribution", None)))
    except ValueError as exc:
        exc = _as_flag(_as_flag(exc, "sampling.size", "--sample-size"), "n", "--n")
        for internal, flag in (("reports_per_user", "--reports-per-user"),
                               ("dummy_distribution", "--dummy-distribution"),
                               ("dummies", "--dummies"), ("honest", "--honest")):
            exc = _as_flag(exc, internal, flag)
        raise exc from None


def _dummy_distribution_arg(text):
    """--dummy-distribution: uniform, blanket, or comma-separated probabilities."""
    if text is None or text.strip().lower() in ("uniform", "blanket"):
        return text
    try:
        return tuple(float(x) for x in text.split(","))
    except ValueError:
        raise ValueError("--dummy-distribution must be uniform, blanket or comma-separated "
                         f"probabilities over the mechanism's outputs; got {text!r}") from None


def _mechanism_spec(a) -> str:
    """--mechanism, or gaussian-nm:Z for --noise-multiplier Z (the two exclude each other)."""
    z = getattr(a, "noise_multiplier", None)
    if z is None:
        return a.mechanism or "ldp"
    if a.mechanism is not None:
        raise ValueError("--noise-multiplier selects the Gaussian mechanism; do not combine "
                         f"it with --mechanism (got --mechanism {a.mechanism})")
    if getattr(a, "eps0", None) is not None:
        raise ValueError("--noise-multiplier selects the Gaussian mechanism, which has no "
                         "eps0; drop --eps0")
    return f"gaussian-nm:{z!r}"


def _num(s: str) -> float:
    """Numbers as typed by people: 1e6, 100000, 0.5 (validation happens in the library)."""
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None


def _int_like(s: str):
    x = _num(s)
    return int(x) if float(x).is_integer() else x


def _protocol_args(p, need_eps0=True):
    p.add_argument("--eps0", type=_num,
                   help="local privacy level eps0 of the randomizer, e.g. --eps0 1.0 (needed "
                        "for ldp and rr:K; optional for matrix:FILE)")
    p.add_argument("--n", type=_int_like, required=True,
                   help="number of users per round, e.g. --n 1e5")
    p.add_argument("--mechanism", default=None,
                   help="ldp (default: any eps0-LDP randomizer), rr:K (k-ary randomized "
                        "response, e.g. rr:3), oue:D, rappor:D, hr:D, olh:D (unary encodings "
                        "and hashing on D values, e.g. oue:1000), gaussian:SIGMA (sigma per "
                        "unit l2 diameter, e.g. gaussian:2.5), gaussian-nm:Z (noise "
                        "multiplier, e.g. gaussian-nm:5), matrix:FILE (e.g. matrix:R.csv; "
                        "format below)")
    p.add_argument("--noise-multiplier", type=_num, default=None, metavar="Z",
                   help="the Gaussian mechanism with this noise multiplier: inputs clipped to "
                        "l2 norm C get N(0, Z^2 C^2 I), as in Opacus and dp_accounting (= "
                        "gaussian:Z/2 per unit diameter), e.g. --noise-multiplier 5")
    p.add_argument("--checkin", type=_num, default=None, metavar="RATE",
                   help="each user takes part in a round independently with this probability, "
                        "e.g. --checkin 0.1")
    p.add_argument("--sample-size", type=_int_like, default=None, metavar="M",
                   help="M users sampled without replacement per round, e.g. --sample-size 1000")
    p.add_argument("--rounds", type=_int_like, default=1,
                   help="number of adaptive rounds T (default 1), e.g. --rounds 100")
    p.add_argument("--bound", default=None,
                   help="only this bound, e.g. --bound fmt20 (default: every bound that "
                        "applies; list: shuffledp bounds)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    if any(a.dest == "details" for a in p._actions):
        return
    p.add_argument("--details", action="store_true",
                   help="also print each row's full validity sentence")


def _epilog(*examples) -> str:
    return ("examples:\n" + "\n".join(f"  {e}" for e in examples) + "\n\n"
            + _fill(MATRIX_HELP) + "\n\n" + _fill(ADJACENCY_HELP))


def _fill(text: str) -> str:
    import textwrap
    return textwrap.fill(text, 88)


_COMPOSITION_HELP = ("how rounds are composed: rdp (Renyi DP summed, then converted), kov15 "
                     "(optimal (eps, delta) composition), pld (privacy-loss distributions; "
                     "needs the pld extra), none (one round only); default: the tightest "
                     "available, e.g. --composition rdp")


def _composer_ids():
    from ..compose import ids
    return ids()


#: Sub-commands declared in this module: their parsers need none of the command modules.
CORE_COMMANDS = ("epsilon", "delta", "rdp", "bounds", "calibrate", "compose")
#: The command modules beside the CLI (``shuffledp.apps.<module>.add_cli``) and the
#: sub-commands each registers, in the order of ``shuffledp --help``
#: (tests/test_cli_start.py checks these names against what the modules register).
COMMAND_MODULES = (("report", ("report",)), ("figures", ("figure",)), ("sweep", ("sweep",)),
                   ("example_files", ("example",)), ("fl.cli", ("fl-demo",)))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``shuffledp`` argument parser.

    ``command``: the sub-command about to be parsed (``main`` passes the first argument).
    When it is one of ``CORE_COMMANDS``, the commands of the other modules get a parser
    with their name only, so those modules (the report, the sweep, the figures and what
    they import) are not loaded to answer one question: about 0.05 s of a fresh process,
    more where Python cannot cache bytecode. The usage line, the choices and the parse
    of that command are the same as with the full parser."""
    light = command in CORE_COMMANDS
    fmt = argparse.RawDescriptionHelpFormatter
    ap = _Parser(prog="shuffledp", formatter_class=fmt,
                 description="Privacy accounting for the shuffle model: certified central "
                             "(epsilon, delta) and RDP guarantees for n users who randomize "
                             "locally and whose reports are shuffled, over T rounds.",
                 epilog="examples:\n"
                        "  shuffledp epsilon --eps0 1 --n 1e4 --delta 1e-6\n"
                        "  shuffledp calibrate eps0 --n 1e4 --epsilon 1 --delta 1e-6\n"
                        "  shuffledp <command> --help   # the options of one command\n\n"
                        + _fill(ADJACENCY_HELP))
    ap.add_argument("--version", action=_Version)
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    p = sub.add_parser("epsilon", help="smallest certified epsilon for a delta",
                       formatter_class=fmt,
                       epilog=_epilog("shuffledp epsilon --eps0 1 --n 1e4 --delta 1e-6",
                                      "shuffledp epsilon --eps0 1 --n 1e4 --delta 1e-6 "
                                      "--mechanism rr:3 --rounds 10 --composition pld",
                                      "shuffledp epsilon --noise-multiplier 5 --n 60000 "
                                      "--checkin 0.1 --rounds 100 --delta 1e-5"))
    _protocol_args(p)
    p.add_argument("--delta", type=_num, required=True,
                   help="target delta in (0, 1), e.g. --delta 1e-6")
    _add_question_options(p)

    p = sub.add_parser("delta", help="smallest certified delta for an epsilon",
                       formatter_class=fmt,
                       epilog=_epilog("shuffledp delta --eps0 1 --n 1e4 --epsilon 0.1",
                                      "shuffledp delta --mechanism matrix:R.csv --n 1000 "
                                      "--epsilon 0.5 --rounds 5"))
    _protocol_args(p)
    p.add_argument("--epsilon", type=_num, required=True,
                   help="epsilon >= 0 at which to bound delta, e.g. --epsilon 0.5")
    _add_question_options(p)

    p = sub.add_parser("rdp", help="RDP curve at given orders", formatter_class=fmt,
                       epilog=_epilog("shuffledp rdp --eps0 1 --n 1e4 --orders 2,4,8,16"))
    _protocol_args(p)
    p.add_argument("--orders", required=True,
                   help="comma-separated Renyi orders > 1, e.g. --orders 2,3,4.5")
    _add_relation(p)
    add_deployment_flags(p, "defaults")

    p = sub.add_parser("bounds", help="list every bound with its kind, class and reference",
                       formatter_class=fmt,
                       epilog="examples:\n  shuffledp bounds\n  shuffledp bounds --json")
    p.add_argument("--json", action="store_true", help="print one JSON list")

    _extra_commands(sub, light)
    return ap


def _add_question_options(p):
    """The options of an epsilon or delta question after its target (one home, so the
    two commands cannot drift apart): --composition, --lower, --relation and the
    deployment flags."""
    p.add_argument("--composition", default=None, choices=_composer_ids(),
                   help=_COMPOSITION_HELP)
    _add_lower(p)
    _add_relation(p)
    add_deployment_flags(p, "defaults")


def _add_lower(p):
    p.add_argument("--lower", action="store_true",
                   help="also compute lower bounds, estimates and comparison-only bounds "
                        "(slower; by default only the bounds that can be the answer)")


#: The deployment flags (docs/deployments.md), declared once: (flag, metavar, what it is,
#: default when a command takes one value with defaults, example value).
_DEPLOYMENT_FLAGS = (
    ("--reports-per-user", "K", "each user sends K reports per round, all shuffled together "
     "(docs/deployments.md)", 1, "4", "1,2,4"),
    ("--dummies", "D", "D extra reports per round on public inputs fixed in advance, "
     "randomized where the adversary cannot see", 0, "1000", "0,1000"),
    ("--honest", "H", "only H of the n users are honest (the victim included); the others "
     "collude and their reports are known", None, "9e5", "9e5,1e5"),
)


def add_deployment_flags(p, form: str, list_type=None) -> None:
    """--reports-per-user, --dummies, --honest on parser ``p``. ``form``: "defaults" (one
    value, defaults 1 / 0 / all n: the epsilon, delta and rdp commands, whose
    protocol_from_args reads them), "given" (one value, None when not given: calibrate,
    which refuses a flag its question cannot use) or "list" (comma lists parsed by
    ``list_type``, None when not given: the sweep's axes)."""
    if form not in ("defaults", "given", "list"):
        raise ValueError(f"form must be 'defaults', 'given' or 'list'; got {form!r}")
    for flag, var, what, default, one, many in _DEPLOYMENT_FLAGS:
        if form == "list":
            p.add_argument(flag, type=list_type, default=None, metavar=var + "S",
                           help=f"{what}; comma-separated values, e.g. {flag} {many}")
            continue
        if form == "defaults":
            shown = "all n" if default is None else default
            p.add_argument(flag, type=_int_like, default=default, metavar=var,
                           help=f"{what} (default {shown}), e.g. {flag} {one}")
        else:
            p.add_argument(flag, type=_int_like, default=None, metavar=var,
                           help=f"{what}, e.g. {flag} {one}")
    if form == "defaults":
        p.add_argument("--dummy-distribution", default=None, metavar="DIST",
                       help="each dummy drawn from this public distribution over the outputs: "
                            "uniform, blanket (the mechanism's blanket) or comma-separated "
                            "probabilities, e.g. --dummy-distribution uniform (docs/dummies.md)")


def _add_relation(p):
    p.add_argument("--relation", default="replace_one",
                   choices=("replace_one", "add_or_remove_one"),
                   help="neighbouring relation (default replace_one: one user's input "
                        "replaced; add_or_remove_one: one user present or absent, as Opacus "
                        "and dp_accounting state epsilon; needs sampling, e.g. --checkin)")


def _extra_commands(sub, light: bool = False):
    """Sub-commands that live in their own modules (registered when those modules exist);
    ``light``: only their names (``build_parser``)."""
    _add_calibrate(sub)
    _add_compose_cli(sub, _protocol_args, _num, _int_like)
    # The CLI's own helpers a command module needs beyond the common ones (passed in: the
    # command modules sit beside the CLI and do not import it).
    helpers = {"sweep": {"deployment_flags": add_deployment_flags}}
    for modname, names in COMMAND_MODULES:
        if light:
            for name in names:
                sub.add_parser(name)
            continue
        if modname == "fl.cli":          # fl-demo; torch is imported only when it runs
            from .fl.cli import add_cli as _fl_cli
            _fl_cli(sub)
            continue
        try:
            mod = __import__(f"shuffledp.apps.{modname}", fromlist=["add_cli"])
        except ImportError:
            continue
        mod.add_cli(sub, _protocol_args, _num, _int_like, **helpers.get(modname, {}))


# ------------------------------------------------------------------------------------------
# calibrate
# ------------------------------------------------------------------------------------------
#: Flags each calibration question uses; any other flag given is an error (never ignored).
_DEPLOY = {"reports_per_user", "dummies", "honest"}
_USES = {
    "eps0": {"n", "k", "mechanism", "checkin", "sample_size", "rounds"} | _DEPLOY,
    "sigma": {"n", "checkin", "sample_size", "rounds"} | _DEPLOY,
    "rounds": {"n", "eps0", "sigma", "noise_multiplier", "mechanism", "checkin",
               "sample_size"} | _DEPLOY,
    "users": {"eps0", "sigma", "noise_multiplier", "mechanism", "checkin", "sample_size",
              "rounds", "reports_per_user", "dummies"},
}
_FLAG = {"n": "--n", "k": "--k", "mechanism": "--mechanism", "checkin": "--checkin",
         "sample_size": "--sample-size", "rounds": "--rounds", "eps0": "--eps0",
         "sigma": "--sigma", "noise_multiplier": "--noise-multiplier",
         "reports_per_user": "--reports-per-user", "dummies": "--dummies",
         "honest": "--honest"}

_EPILOG = """examples:
  shuffledp calibrate eps0 --n 10000 --epsilon 1 --delta 1e-6            # any eps0-LDP randomizer
  shuffledp calibrate eps0 --n 10000 --epsilon 1 --delta 1e-6 --mechanism rr:3 --rounds 10
  shuffledp calibrate sigma --n 60000 --epsilon 1 --delta 1e-5 --checkin 0.1 --rounds 100
  shuffledp calibrate rounds --n 60000 --noise-multiplier 5 --checkin 0.1 --epsilon 3 --delta 1e-5
  shuffledp calibrate rounds --n 10000 --eps0 1 --epsilon 1 --delta 1e-6
  shuffledp calibrate users --eps0 1 --mechanism rr:2 --epsilon 0.1 --delta 1e-6

The answer is always on the certified side (its epsilon <= the target). The runner-up line
gives the parameter the next-best bound would allow on its own. Neighbours: replace-one
unless --relation add_or_remove_one (which needs sampling, e.g. --checkin).
Gaussian noise: calibrate sigma prints sigma per unit l2 diameter AND the noise multiplier
(2 * sigma: N(0, z^2 C^2 I) on inputs clipped to l2 norm C, the Opacus / dp_accounting
unit); rounds/users take either --sigma (per unit diameter) or --noise-multiplier."""


def _check_flags(a) -> None:
    used = _USES[a.what]
    given = [k for k in _FLAG if getattr(a, k, None) is not None]
    extra = [_FLAG[k] for k in given if k not in used]
    if extra:
        raise ValueError(f"calibrate {a.what} does not use {', '.join(extra)} "
                         f"(it uses {', '.join(_FLAG[k] for k in _FLAG if k in used)}, "
                         "--epsilon, --delta)")
    if a.checkin is not None and a.sample_size is not None:
        raise ValueError("use at most one of --checkin and --sample-size")
    for k in ("sigma", "noise_multiplier"):
        if getattr(a, k) is not None and (a.mechanism is not None or a.eps0 is not None):
            raise ValueError(f"{_FLAG[k]} selects the Gaussian mechanism; do not combine it "
                             "with --mechanism or --eps0")
    if a.sigma is not None and a.noise_multiplier is not None:
        raise ValueError("use at most one of --sigma (per unit l2 diameter) and "
                         "--noise-multiplier (= 2 * sigma)")


def _add_calibrate(sub):
    """`shuffledp calibrate eps0|sigma|rounds|users ...` (``shuffledp.accounting.calibrate`` answers)."""
    num, int_like = _num, _int_like
    p = sub.add_parser("calibrate", help="the parameter that meets a target (epsilon, delta)",
                       description="Find the parameter that meets a target (epsilon, delta): "
                                   "the largest eps0, smallest sigma, largest number of rounds "
                                   "or smallest number of users.",
                       epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["eps0", "sigma", "rounds", "users"],
                   help="the parameter to calibrate")
    p.add_argument("--epsilon", type=num, required=True, help="target epsilon, e.g. 1.0")
    p.add_argument("--delta", type=num, required=True, help="target delta in (0, 1), e.g. 1e-6")
    p.add_argument("--n", type=int_like, default=None,
                   help="users per round (eps0, sigma, rounds), e.g. 10000")
    p.add_argument("--eps0", type=num, default=None,
                   help="local eps0 of the randomizer (rounds, users), e.g. 1.0")
    p.add_argument("--k", type=int_like, default=None,
                   help="eps0: calibrate k-ary randomized response (same as --mechanism rr:K)")
    p.add_argument("--sigma", type=num, default=None,
                   help="rounds/users: a Gaussian mechanism with this sigma per unit l2 "
                        "diameter, e.g. 2.5")
    p.add_argument("--noise-multiplier", type=num, default=None, metavar="Z",
                   help="rounds/users: a Gaussian mechanism with this noise multiplier "
                        "(N(0, Z^2 C^2 I) on inputs clipped to norm C; = --sigma Z/2), e.g. 5")
    p.add_argument("--mechanism", default=None,
                   help="eps0: the family calibrated: ldp (default), rr:K, oue:D, rappor:D, hr:D, "
                        "olh:D; rounds/users: ldp, rr:K, oue:D, ..., matrix:FILE")
    p.add_argument("--checkin", type=num, default=None, metavar="RATE",
                   help="each user takes part in a round with this probability, e.g. 0.1")
    p.add_argument("--sample-size", type=int_like, default=None, metavar="M",
                   help="M users sampled without replacement per round, e.g. 1000")
    p.add_argument("--rounds", type=int_like, default=None,
                   help="number of rounds T (eps0, sigma, users; default 1), e.g. 10")
    p.add_argument("--relation", default="replace_one",
                   choices=("replace_one", "add_or_remove_one"),
                   help="neighbouring relation of the target (default replace_one: one "
                        "user's input replaced; add_or_remove_one: one user present or "
                        "absent, as Opacus and dp_accounting state epsilon; needs sampling, "
                        "e.g. --checkin)")
    add_deployment_flags(p, "given")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    def run(a):
        _check_flags(a)
        sampling = sampling_from_args(a)
        T = 1 if a.rounds is None else a.rounds
        if a.what in ("eps0", "sigma", "rounds") and a.n is None:
            raise ValueError(f"--n is required for calibrate {a.what}")
        bar = Progress(None, f"calibrate {a.what}", enabled=None if not a.json else False)
        try:
            return _run_cli(a, sampling, T, lambda: bar.update(1))  # one accountant evaluation
        finally:
            bar.close()

    def _run_cli(a, sampling, T, step):
        from ..accounting import calibrate as _cal   # only this command uses it (start-up)
        dep = {k: getattr(a, k) for k in ("reports_per_user", "dummies", "honest")
               if getattr(a, k) is not None}
        if a.what == "eps0":
            k, fam = a.k, None
            if a.mechanism is not None:
                kind, _, arg = a.mechanism.partition(":")
                kind = kind.strip().lower()
                if kind == "ldp":
                    mk = None
                elif kind in ("rr", "krr"):
                    mk = mechanism_from_spec(a.mechanism, 1.0).k
                elif kind in ("gaussian", "gauss", "matrix"):
                    raise ValueError("calibrate eps0: --mechanism must be a family with an eps0 "
                                     "parameter (ldp, rr:K, oue:D, rappor:D, hr:D, olh:D); "
                                     f"got {a.mechanism!r}")
                else:
                    mk, fam = None, mechanism_from_spec(a.mechanism, 1.0)
                if k is not None and (fam is not None or mk != k):
                    raise ValueError(f"--k {k} contradicts --mechanism {a.mechanism}")
                k = mk
            c = _cal.eps0(a.n, a.epsilon, a.delta, T, k=k, mechanism=fam, sampling=sampling,
                     relation=a.relation, progress=step, **dep)
        elif a.what == "sigma":
            c = _cal.sigma(a.n, a.epsilon, a.delta, T, sampling=sampling, relation=a.relation,
                      progress=step, **dep)
        else:
            spec = (f"gaussian:{a.sigma!r}" if a.sigma is not None else
                    f"gaussian-nm:{a.noise_multiplier!r}" if a.noise_multiplier is not None
                    else (a.mechanism or "ldp"))
            mech = mechanism_from_spec(spec, a.eps0)
            if a.what == "rounds":
                c = _cal.rounds(Shuffle(mech, a.n, sampling=sampling, **dep), a.epsilon, a.delta,
                           relation=a.relation, progress=step)
            else:
                c = _cal.users(mech, a.epsilon, a.delta, T, sampling=sampling, relation=a.relation,
                          progress=step, **dep)
        print(json_output(a, c.to_dict(), c.protocol) if a.json else str(c))
        return 0

    p.set_defaults(func=run)


def _add_compose_cli(sub, protocol_args, num, int_like):
    """``shuffledp compose FILE [--delta D | --epsilon E] [--json]``."""
    p = sub.add_parser("compose", help="one privacy budget for a ledger file (TOML or JSON)",
                       description="Compose every entry of a ledger file (shuffled protocols "
                                   "and central dp_accounting events, under one neighbouring "
                                   "relation: replace-one unless the file or --relation says "
                                   "add_or_remove_one) and print "
                                   "the tightest valid upper bound with its breakdown. The "
                                   "file may hold 'delta' or 'epsilon' as the question.")
    p.add_argument("file", help="ledger file: .toml, or JSON (an example: shuffledp example budget)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--delta", type=num, default=None, help="answer epsilon at this delta")
    g.add_argument("--epsilon", type=num, default=None, help="answer delta at this epsilon")
    p.add_argument("--relation", default=None, choices=("replace_one", "add_or_remove_one"),
                   help="neighbouring relation of every entry (default: the file's "
                        "'relation' key, else replace_one); a file that names another "
                        "relation is refused")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    def run(a) -> int:
        from ..accounting.ledger import Accountant
        from ..interop.ledger_io import load_ledger
        acc, data = load_ledger(a.file)
        if a.relation is not None and a.relation != acc.relation:
            if "relation" in data:
                raise ValueError(f"--relation {a.relation} contradicts the file's relation = "
                                 f"{data['relation']!r}: a ledger is composed under one "
                                 "neighbouring relation")
            acc = Accountant.from_dict(dict(data, relation=a.relation))
        d, e = a.delta, a.epsilon
        if d is None and e is None:
            d, e = data.get("delta"), data.get("epsilon")
        if d is None and e is None:
            raise ValueError("give --delta or --epsilon (or a 'delta' / 'epsilon' key in the file)")
        r = acc.epsilon(d) if d is not None else acc.delta(e)
        if a.json:
            print(json_output(a, dict(r.to_dict(), ledger=data)))
        else:
            print(r.table())
        return 0

    p.set_defaults(func=run)


def _cmd_bounds(a) -> int:
    from ..bounds import all_bounds
    from ..core.results import SCOPES
    rows = [{"bound": b.id, "kind": b.kind, "default": b.default, "scope": b.scope,
             "valid_for": SCOPES.get(b.scope, ""), "title": b.title,
             "reference": _public_reference(b.reference)} for b in all_bounds()]
    if a.json:
        print(json.dumps(rows))
        return 0
    import textwrap
    w = max(len(r["bound"]) for r in rows)
    for r in rows:
        tag = r["kind"] + ("" if r["default"] or r["kind"] != "upper" else " (not default)")
        print(f"{r['bound'].ljust(w)}  {tag.ljust(19)}  {r['scope']}")
        for line in textwrap.wrap(f"{r['title']}. {r['reference']}", 96):
            print(f"    {line}")
    print()
    print(_fill("classes: " + "; ".join(f"{k} = {v}" for k, v in SCOPES.items())))
    print(_fill("Bounds marked 'not default' (reconstructed or unconfirmed formulas) and "
                "estimates are shown for comparison but never chosen as the answer."))
    return 0


def _public_reference(ref: str) -> str:
    """The paper citation without pointers to internal design notes."""
    import re
    ref = re.sub(r";?\s*spec/[\w.]+(\s*§\s*[\w.,\s§]+)?", "", ref)
    return ref.strip().rstrip(";,")


GAUSSIAN_NOTE = ("note: 'upper' rows hold for every pair of neighbouring datasets; "
                 "'liew-homogeneous' is exact only when all other users hold the same vector "
                 "(an estimate, not a guarantee; docs/bounds.md).")


SAMPLING_NOTE = ("note: sampled rounds assume the server sees the participants' shuffled "
                 "reports and their number, not who took part (docs/bounds.md, 'Sampled "
                 "rounds').")


def _gaussian_baselines(proto, a):
    """Central Poisson-subsampled Gaussian ε (dp_accounting) beside a shuffled Gaussian.

    At the same noise multiplier z = 2σ: the shuffled protocol adds N(0, z²C²I) to every
    clipped report, the central baseline adds it once to the sum (trusted server,
    add/remove neighbours). Only for check-in or unsampled protocols (Poisson sampling is
    what the central accountants model); with check-in only when the ``pld`` extra is
    installed (otherwise None). Unsampled: computed here in closed form
    (``central_gaussian_unsampled``).
    """
    if not isinstance(proto.mechanism, Gaussian) or isinstance(proto.sampling, WithoutReplacement):
        return None
    if proto.is_deployment:
        return None         # one central query per round is not the deployment's baseline
    q = proto.sampling.rate if isinstance(proto.sampling, CheckIn) else 1.0
    if q == 1.0:
        # No sampling: the composed Gaussian is exact in closed form (no dp_accounting,
        # whose import alone costs ~1.4 s).
        from ..accounting.baselines import central_gaussian_unsampled
        return central_gaussian_unsampled(proto.mechanism.noise_multiplier, int(a.rounds),
                                          a.delta)
    try:
        from ..accounting.baselines import central_baselines
        return central_baselines(q, proto.mechanism.noise_multiplier, int(a.rounds), a.delta)
    except ImportError:
        return None


def _run(a) -> int:
    if a.cmd == "bounds":
        return _cmd_bounds(a)
    if a.cmd in ("epsilon", "delta"):
        proto = protocol_from_args(a)
        if a.cmd == "epsilon":
            r = accountant.epsilon(proto, a.delta, a.rounds, bound=a.bound,
                                   composition=a.composition, lower=a.lower,
                                   relation=a.relation)
        else:
            r = accountant.delta(proto, a.epsilon, a.rounds, bound=a.bound,
                                 composition=a.composition, lower=a.lower,
                                 relation=a.relation)
        base = _gaussian_baselines(proto, a) if a.cmd == "epsilon" else None
        if a.json:
            d = r.to_dict()
            if base is not None:
                d["central_baselines"] = base
            print(json_output(a, d, proto))
        else:
            print(r.table(details=getattr(a, "details", False)))
            if isinstance(proto.mechanism, Gaussian):
                print(_fill(GAUSSIAN_NOTE))
            if proto.sampling is not None:
                print(_fill(SAMPLING_NOTE))
            if base is not None:
                print(_fill(f"central baselines at the same noise multiplier "
                            f"{base['noise_multiplier']:g} and delta = {base['delta']:g} (a "
                            f"trusted server adds N(0, z^2 C^2 I) once to the sum, no "
                            f"shuffler; {base['source']}): add/remove neighbours: RDP epsilon "
                            f"= {base['rdp']:.4g}, PLD epsilon = {base['pld']:.4g}; "
                            f"replace-one neighbours: PLD epsilon = "
                            f"{base['pld_replace_one']:.4g}"))
        return 0
    if a.cmd == "rdp":
        proto = protocol_from_args(a)
        try:
            orders = [float(x) for x in a.orders.split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"orders must be comma-separated numbers > 1; got {a.orders!r}") from None
        c = accountant.rdp(proto, orders, rounds=a.rounds, bound=a.bound, relation=a.relation)
        if a.json:
            print(json_output(a, c.to_dict(), proto))
        else:
            print(proto.describe())
            print(c.table())
        return 0
    return a.func(a)


def main(argv=None) -> int:
    """Entry point; returns the exit status (0 ok, 2 bad input)."""
    global _ARGV
    _ARGV = list(sys.argv[1:] if argv is None else argv)
    command = _ARGV[0] if _ARGV else None
    if command in CORE_COMMANDS and argv is None:
        # The process's own command line (`shuffledp epsilon ...`): the library's malloc
        # setting (freed blocks up to 32 MB reused, not returned and faulted in again; glibc
        # only, SHUFFLEDP_MALLOC=system opts out), applied now rather than at the first
        # certified FFT, which comes after a question's largest arrays (a clone pair's PLD
        # atoms): LDP(1), n = 1e9, T = 30 took 76 000 page faults in a fresh process
        # (3 000 when asked again in it), 20 000 with this; 0.1-0.3 s CPU (docs/latency.md).
        keep_freed_memory()
    ap = build_parser(command)
    try:
        a = ap.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        status = _run(a)
        sys.stdout.flush()      # a reader that has gone shows up here, handled below
        return status
    except BrokenPipeError:
        # Output piped into `head` or `less` that stopped reading: not an error of ours.
        # The Python docs' recipe (signal module, "Note on SIGPIPE"): point stdout at
        # devnull so the interpreter's final flush does not fail again, and exit 1.
        _stdout_to_devnull()
        return 1
    except ValueError as exc:
        print(f"shuffledp: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:          # a file named on the command line cannot be used
        name = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        print(f"shuffledp: error: cannot use the file{name}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    except OverflowError as exc:
        print(f"shuffledp: error: a number is outside the floating-point range ({exc})",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("shuffledp: interrupted", file=sys.stderr)
        return 130


def _stdout_to_devnull() -> None:
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):   # no real file descriptor (captured)
        pass


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
