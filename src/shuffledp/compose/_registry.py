"""The composer base class and registry (see ``shuffledp.compose``)."""

from __future__ import annotations

from typing import ClassVar

from ..core.views import EpsilonAt

__all__ = ["Composer", "register", "get", "all_composers", "ids", "merge_parts"]


class Composer:
    """Base class: ``name``, ``reference`` and the three methods of the package docstring."""

    name: ClassVar[str] = ""
    reference: ClassVar[str] = ""

    def accepts(self, parts) -> str | None:
        raise NotImplementedError

    def epsilon(self, parts, delta: float, **opts):
        raise NotImplementedError

    def delta(self, parts, epsilon: float, **opts):
        raise NotImplementedError

    #: True when an answer costs far more than the others' (an optimised split search):
    #: the selection loop tries it last, after the others' values give it a value to beat.
    costly: ClassVar[bool] = False

    def answer(self, parts, ask, **opts):
        """``epsilon(parts, ask.delta)`` or ``delta(parts, ask.epsilon)``, as ``ask`` (an
        ``EpsilonAt`` / ``DeltaAt`` question) says: the one place that dispatches on it."""
        if isinstance(ask, EpsilonAt):
            return self.epsilon(parts, ask.delta, **opts)
        return self.delta(parts, ask.epsilon, **opts)

    def floor(self, parts, ask, beat: float) -> float | None:
        """A proven value this composer's answer to ``ask`` cannot go below, found cheaply
        and worth having only when it is at least ``beat`` (the best answer known): the
        selection loop then skips the composer with that proof. None: nothing proven."""
        return None


def merge_parts(parts) -> list:
    """``parts`` with every repeated view (the same object) merged into one part of the
    summed count, in order of first appearance. T1 + T2 rounds of one view are T1 + T2
    rounds of it: every composer merges first, so that the answer never depends on how the
    rounds were listed (the ledger merges equal protocols before building views)."""
    out: list = []
    for v, c in parts:
        for i, (w, k) in enumerate(out):
            if w is v:
                out[i] = (w, k + c)
                break
        else:
            out.append((v, c))
    return out


_REGISTRY: dict[str, Composer] = {}


def register(cls):
    """Class decorator: add one instance of the composer to the registry."""
    if not cls.name or cls.name in _REGISTRY:
        raise RuntimeError(f"composer name {cls.name!r} is empty or registered twice")
    _REGISTRY[cls.name] = cls()
    return cls


def ids() -> list[str]:
    return list(_REGISTRY)


def all_composers() -> list[Composer]:
    return list(_REGISTRY.values())


def get(name: str) -> Composer:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"composition must be one of {', '.join(_REGISTRY)}; got {name!r}") from None
