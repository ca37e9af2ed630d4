"""shuffledp: privacy accounting for the shuffle model.

>>> import shuffledp as sd
>>> r = sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=10_000), delta=1e-6)
>>> r.kind
'upper'
"""

from .core.mechanisms import LDP, Gaussian, Randomizer, RandomizedResponse
from .core.mechanisms import OUE, RAPPOR, HadamardResponse, LocalHashing
from .core.protocols import CheckIn, Shuffle, WithoutReplacement
from .core.errors import NotApplicableError
from .core.results import Candidate, RdpCurve, Result
from .accounting.accountant import delta, epsilon, rdp
from .accounting.ledger import Accountant, LedgerResult, to_dp_accounting
from . import bounds
from .accounting import calibrate
from .core._memo import clear_caches

__version__ = "0.1.0"

__all__ = [
    "LDP", "RandomizedResponse", "Randomizer", "Gaussian",
    "OUE", "RAPPOR", "HadamardResponse", "LocalHashing",
    "Shuffle", "CheckIn", "WithoutReplacement",
    "epsilon", "delta", "rdp", "bounds", "calibrate",
    "Result", "Candidate", "RdpCurve", "NotApplicableError",
    "Accountant", "LedgerResult", "to_dp_accounting", "clear_caches",
]
