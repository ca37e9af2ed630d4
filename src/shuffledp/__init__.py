"""shuffledp: privacy accounting for the shuffle model.

>>> import shuffledp as sd
>>> r = sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=10_000), delta=1e-6)
>>> r.kind
'upper'
"""

from typing import TYPE_CHECKING

from .core.mechanisms import LDP, Gaussian, Randomizer, RandomizedResponse
from .core.mechanisms import OUE, RAPPOR, HadamardResponse, LocalHashing
from .core.protocols import CheckIn, Shuffle, WithoutReplacement
from .core.errors import NotApplicableError
from .core.results import Candidate, RdpCurve, Result
from .core._memo import clear_caches

if TYPE_CHECKING:      # type checkers and the API docs (static analysis); at run time below
    from . import bounds
    from .accounting import calibrate
    from .accounting.accountant import delta, epsilon, rdp
    from .accounting.ledger import Accountant, LedgerResult, to_dp_accounting

__version__ = "0.1.0"

__all__ = [
    "LDP", "RandomizedResponse", "Randomizer", "Gaussian",
    "OUE", "RAPPOR", "HadamardResponse", "LocalHashing",
    "Shuffle", "CheckIn", "WithoutReplacement",
    "epsilon", "delta", "rdp", "bounds", "calibrate",
    "Result", "Candidate", "RdpCurve", "NotApplicableError",
    "Accountant", "LedgerResult", "to_dp_accounting", "clear_caches",
]


def __getattr__(name):
    # The accountant, the bound registry, calibration and the ledger are imported on first
    # use (PEP 562): `import shuffledp` then costs the records above (and numpy), and a
    # fresh process that asks one epsilon question (the CLI) does not load calibration or
    # the ledger. Each name is bound here once, so later lookups are plain attributes.
    if name in ("epsilon", "delta", "rdp"):
        from .accounting import accountant
        value = getattr(accountant, name)
    elif name in ("Accountant", "LedgerResult", "to_dp_accounting"):
        from .accounting import ledger
        value = getattr(ledger, name)
    elif name == "bounds":
        # Not `from . import bounds`: that asks hasattr(shuffledp, "bounds") first, which
        # would come back here. Importing the submodule binds it in this module's globals.
        import shuffledp.bounds
        value = shuffledp.bounds
    elif name == "calibrate":
        from .accounting import calibrate as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
