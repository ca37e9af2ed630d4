"""Federated learning with shuffled check-in: simulate, account, plot (extra ``fl``).

``run_demo`` trains a small model on one-example users (scikit-learn's digits or MNIST IDX
files), each round's participants sending clipped, noised gradients through a shuffler, and
accounts for the run with the library (valid upper bound, homogeneous-pair estimate) and
with the central DP-SGD baseline. Importing this package does not import torch.
"""

from __future__ import annotations

__all__ = ["run_demo", "DEFAULTS", "load_dataset", "read_idx", "IdxFormatError", "TrainConfig",
           "train", "epsilon_at", "checkpoints", "METHODS"]

_LAZY = {"run_demo": "demo", "DEFAULTS": "defaults", "load_dataset": "data", "read_idx": "data",
         "IdxFormatError": "data", "TrainConfig": "sim", "train": "sim",
         "epsilon_at": "..accounting.fl", "checkpoints": "..accounting.fl",
         "METHODS": "..accounting.fl"}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
