"""shuffledp: privacy accounting for the shuffle model.

>>> import shuffledp as sd
>>> r = sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=10_000), delta=1e-6)
>>> r.kind
'upper'
"""

from .mechanisms import LDP, Gaussian, Randomizer, RandomizedResponse
from .mechanisms import OUE, RAPPOR, HadamardResponse, LocalHashing
from .protocols import CheckIn, Shuffle, WithoutReplacement
from .errors import NotApplicableError
from .results import Candidate, RdpCurve, Result
from .accountant import delta, epsilon, rdp
from .ledger import Accountant, LedgerResult, to_dp_accounting
from . import bounds, calibrate
from ._memo import clear_caches

__version__ = "0.1.0"

__all__ = [
    "LDP", "RandomizedResponse", "Randomizer", "Gaussian",
    "OUE", "RAPPOR", "HadamardResponse", "LocalHashing",
    "Shuffle", "CheckIn", "WithoutReplacement",
    "epsilon", "delta", "rdp", "bounds", "calibrate",
    "Result", "Candidate", "RdpCurve", "NotApplicableError",
    "Accountant", "LedgerResult", "to_dp_accounting", "clear_caches",
]
