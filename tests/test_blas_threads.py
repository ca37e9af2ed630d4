"""The loop answers with BLAS on one thread and gives the caller's setting back."""

from __future__ import annotations

import pytest

import shuffledp as sd
from shuffledp.core import _blas

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads():
    return {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas"}


def test_one_thread_inside_the_loop_and_restored_after(monkeypatch):
    seen = []

    from shuffledp.accounting import select as S
    orig = S._select

    def spy(*a, **k):
        seen.append(_blas_threads())
        return orig(*a, **k)

    monkeypatch.setattr(S, "_select", spy)
    before = _blas_threads()
    sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=1000), delta=1e-6)
    assert seen and all(t == 1 for t in seen[0].values())
    after = _blas_threads()
    assert all(after[f] == t for f, t in before.items())     # (scipy may load its own BLAS)


def test_keep_leaves_blas_alone(monkeypatch):
    monkeypatch.setenv("SHUFFLEDP_BLAS", "keep")
    before = _blas_threads()
    with _blas.single_threaded_blas():
        assert _blas_threads() == before
