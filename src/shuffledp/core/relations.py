"""Neighbouring relations, named as dp_accounting names them (docs/relations.md).

* ``"replace_one"`` (default): D and D′ have the same n users; one user's input differs.
* ``"add_or_remove_one"``: D′ is D plus one user (the victim). Opacus, dp_accounting and
  most DP-SGD papers state their ε under this relation.

``relation(value)`` accepts these strings and dp_accounting's ``NeighboringRelation``
members (``REPLACE_ONE``, ``ADD_OR_REMOVE_ONE``) without importing dp_accounting: a
member is recognised by its type's name and its own name.
"""

from __future__ import annotations

from .errors import NotApplicableError

__all__ = ["REPLACE_ONE", "ADD_OR_REMOVE_ONE", "RELATIONS", "relation", "adjacency_text",
           "short", "everyone_reports_reason"]

REPLACE_ONE = "replace_one"
ADD_OR_REMOVE_ONE = "add_or_remove_one"
RELATIONS = (REPLACE_ONE, ADD_OR_REMOVE_ONE)

_SHORT = {REPLACE_ONE: "replace-one", ADD_OR_REMOVE_ONE: "add/remove"}


def relation(value: object) -> str:
    """The canonical relation string of ``value`` (a string or a dp_accounting
    ``NeighboringRelation`` member); ValueError naming the parameter otherwise."""
    if type(value).__name__ == "NeighboringRelation" and hasattr(value, "name"):
        name = str(value.name).lower()
        if name in RELATIONS:
            return name
        raise ValueError(f"relation must be one of {', '.join(RELATIONS)} (or dp_accounting's "
                         f"NeighboringRelation.REPLACE_ONE / ADD_OR_REMOVE_ONE); got {value!r}, "
                         "which this library does not support")
    if isinstance(value, str):
        v = value.strip().lower().replace("-", "_")
        if v in RELATIONS:
            return v
    raise ValueError(f"relation must be one of {', '.join(RELATIONS)} (or dp_accounting's "
                     f"NeighboringRelation.REPLACE_ONE / ADD_OR_REMOVE_ONE); got {value!r}")


def short(rel: str) -> str:
    """'replace-one' or 'add/remove' (table columns, one-line summaries)."""
    return _SHORT[rel]


_GAUSS = ("Gaussian(sigma) = sigma per unit l2 diameter of the inputs = noise multiplier "
          "2*sigma for inputs clipped to l2 norm C (Opacus, dp_accounting: "
          "Gaussian.from_noise_multiplier(z) is Gaussian(z/2))")


def adjacency_text(rel: str) -> str:
    """The footer sentence every result prints: the relation its numbers are valid under."""
    if rel == REPLACE_ONE:
        return ("neighbouring datasets: replace-one neighbours (replacement: one user's input "
                "replaced by another, n fixed); " + _GAUSS)
    return ("neighbouring datasets: add/remove neighbours (add_or_remove_one: one user "
            "present in one dataset and absent from the other; n is the number of users of the "
            "larger dataset, the user included); " + _GAUSS)


def everyone_reports_reason() -> str:
    return ("add_or_remove_one neighbours have no finite guarantee when every user reports "
            "(no sampling): the number of reports reveals whether the user is present. Use "
            "relation='replace_one', or a protocol with sampling=CheckIn(rate) "
            "(docs/relations.md)")


def refuse_everyone_reports(proto) -> None:
    """Raise NotApplicableError when ``proto`` has every user reporting (add/remove)."""
    s = proto.sampling
    if s is None or (getattr(s, "rate", 0.0) >= 1.0):
        raise NotApplicableError(f"relation='add_or_remove_one' for {proto.describe()}: "
                                 + everyone_reports_reason())
