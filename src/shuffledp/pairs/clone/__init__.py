r"""The clone family of pairs: the generic clone pair (``pair.py``), its instances and its
exact divergences, split by concern (slices, hockey-stick, Rényi, atoms).

Public names are re-exported here; the kernels' helpers stay in their modules.
"""

from .atoms import (FLOOR_MAX_ATOMS, PLD_MAX_ATOMS, pair_floor_atoms, pair_log_atoms,
                    pair_lower_atoms, pair_pld_atoms, pair_pld_tail_floor)
from .hockey import (conditional_hockey, pair_delta, pair_delta_lower, pair_epsilon,
                     threshold_bracket)
from .instances import (fmt20_pair, fmt23_pair, in_stronger_class, krr_marginal_pair,
                        specific_p, specific_pair)
from .pair import MAX_ORDER, ClonePair
from .rdp_points import RDP_POINT_BUDGET
from .renyi import pair_rdp

__all__ = [
    "ClonePair",
    "MAX_ORDER",
    "RDP_POINT_BUDGET",
    "PLD_MAX_ATOMS",
    "FLOOR_MAX_ATOMS",
    "pair_delta",
    "pair_delta_lower",
    "pair_epsilon",
    "pair_rdp",
    "pair_log_atoms",
    "pair_pld_atoms",
    "pair_pld_tail_floor",
    "pair_floor_atoms",
    "pair_lower_atoms",
    "conditional_hockey",
    "threshold_bracket",
    "fmt20_pair",
    "fmt23_pair",
    "specific_pair",
    "specific_p",
    "krr_marginal_pair",
    "in_stronger_class",
]
