"""Datasets for the federated-learning demonstration: one example per user.

* ``digits`` — scikit-learn's bundled 8×8 handwritten digits (1797 images, no download):
  a fixed stratified split into 1500 training users and 297 test images.
* ``mnist:PATH`` — the standard MNIST IDX files a user already has, in the directory PATH:
  ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``,
  ``t10k-labels-idx1-ubyte`` (each optionally ``.gz``; the ``train-images.idx3-ubyte``
  spelling of some mirrors is accepted too). 60000 training users, 10000 test images.

Pixels are scaled to [0, 1]. Arrays are numpy (float32 images, int64 labels); torch is
not needed to load data.
"""

from __future__ import annotations

import gzip
import pathlib
import struct
from dataclasses import dataclass

import numpy as np

__all__ = ["Dataset", "IdxFormatError", "read_idx", "load_digits", "load_mnist", "load_dataset"]

# IDX type codes (LeCun's format description): code -> (numpy big-endian dtype, bytes)
_IDX_TYPES = {0x08: (">u1", 1), 0x09: (">i1", 1), 0x0B: (">i2", 2), 0x0C: (">i4", 4),
              0x0D: (">f4", 4), 0x0E: (">f8", 8)}


class IdxFormatError(ValueError):
    """A file is not a well-formed IDX file (the message names the file and the problem)."""


@dataclass(frozen=True)
class Dataset:
    """Training users (one example each) and a held-out test set."""

    name: str
    x_train: np.ndarray      # (n, C, H, W) float32 in [0, 1]
    y_train: np.ndarray      # (n,) int64
    x_test: np.ndarray
    y_test: np.ndarray
    classes: int = 10

    @property
    def n(self) -> int:
        return int(self.y_train.shape[0])

    def describe(self) -> str:
        c, h, w = self.x_train.shape[1:]
        return (f"{self.name}: {self.n} training users (one {h}x{w} image each), "
                f"{self.y_test.shape[0]} test images, {self.classes} classes")


def read_idx(path, expect_ndim: int | None = None) -> np.ndarray:
    """Read one IDX file (optionally gzip-compressed) into a numpy array.

    Raises ``IdxFormatError`` naming the file for a bad magic number, an unknown type code,
    a wrong number of dimensions, or a file shorter (or longer) than its header announces;
    ``FileNotFoundError`` if it does not exist.
    """
    p = pathlib.Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"IDX file {str(p)!r} does not exist") from None
    if p.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise IdxFormatError(f"IDX file {str(p)!r}: not a readable gzip file ({exc})") from None
    if len(raw) < 4:
        raise IdxFormatError(f"IDX file {str(p)!r} is truncated: {len(raw)} bytes, "
                             "shorter than the 4-byte magic number")
    zero, code, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or code not in _IDX_TYPES or ndim == 0:
        raise IdxFormatError(f"IDX file {str(p)!r} has wrong magic number 0x{raw[:4].hex()} "
                             "(expected 0x0000 then a type code such as 0x08 and the number "
                             "of dimensions, e.g. 0x00000803 for images, 0x00000801 for labels)")
    if expect_ndim is not None and ndim != expect_ndim:
        raise IdxFormatError(f"IDX file {str(p)!r} has {ndim} dimensions; expected {expect_ndim} "
                             f"(magic 0x{raw[:4].hex()})")
    head = 4 + 4 * ndim
    if len(raw) < head:
        raise IdxFormatError(f"IDX file {str(p)!r} is truncated inside its header "
                             f"({len(raw)} bytes, header needs {head})")
    dims = struct.unpack(">" + "I" * ndim, raw[4:head])
    dtype, size = _IDX_TYPES[code]
    need = head + size * int(np.prod(dims, dtype=np.int64))
    if len(raw) < need:
        raise IdxFormatError(f"IDX file {str(p)!r} is truncated: {len(raw)} bytes, the header "
                             f"(shape {tuple(dims)}) announces {need}")
    if len(raw) > need:
        raise IdxFormatError(f"IDX file {str(p)!r} has {len(raw) - need} bytes after the "
                             f"data its header announces (shape {tuple(dims)})")
    return np.frombuffer(raw, dtype=dtype, offset=head).reshape(dims)


def _find(root: pathlib.Path, stem: str) -> pathlib.Path:
    kind = stem.split("-")[1]                      # images | labels
    prefix = stem.split("-")[0]                    # train | t10k
    ext = "idx3-ubyte" if kind == "images" else "idx1-ubyte"
    names = [f"{prefix}-{kind}-{ext}", f"{prefix}-{kind}.{ext}"]
    for nm in names:
        for cand in (root / nm, root / (nm + ".gz")):
            if cand.is_file():
                return cand
    raise FileNotFoundError(f"MNIST directory {str(root)!r} has no {names[0]} (or .gz, or "
                            f"{names[1]}); expected the four standard IDX files there")


def load_mnist(path) -> Dataset:
    """MNIST from the four standard IDX files in directory ``path``."""
    root = pathlib.Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"MNIST path {str(root)!r} is not a directory holding the IDX files")
    arrays = {}
    for part in ("train", "t10k"):
        fi, fl = _find(root, f"{part}-images"), _find(root, f"{part}-labels")
        x = read_idx(fi, expect_ndim=3)
        y = read_idx(fl, expect_ndim=1)
        if x.shape[0] != y.shape[0]:
            raise IdxFormatError(f"IDX files {str(fi)!r} and {str(fl)!r} disagree: "
                                 f"{x.shape[0]} images but {y.shape[0]} labels")
        if y.size and (int(y.min()) < 0 or int(y.max()) > 9):
            raise IdxFormatError(f"IDX file {str(fl)!r}: labels must be digits 0..9; "
                                 f"found {int(y.min())}..{int(y.max())}")
        arrays[part] = ((x.astype(np.float32) / 255.0)[:, None, :, :], y.astype(np.int64))
    return Dataset("mnist", arrays["train"][0], arrays["train"][1],
                   arrays["t10k"][0], arrays["t10k"][1])


def load_digits(n_test: int = 297) -> Dataset:
    """scikit-learn's 8×8 digits: a fixed stratified split (the same for every seed)."""
    try:
        from sklearn.datasets import load_digits as _ld
        from sklearn.model_selection import train_test_split
    except ImportError as exc:      # pragma: no cover - depends on the environment
        raise ImportError("the digits dataset needs scikit-learn "
                          "(pip install 'shuffledp[fl]')") from exc
    d = _ld()
    x = (d.images.astype(np.float32) / 16.0)[:, None, :, :]
    y = d.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=n_test, random_state=0, stratify=y)
    return Dataset("digits", xtr, ytr, xte, yte)


def load_dataset(spec: str) -> Dataset:
    """``digits`` or ``mnist:PATH``."""
    kind, _, arg = spec.partition(":")
    if kind == "digits" and not arg:
        return load_digits()
    if kind == "mnist":
        if not arg:
            raise ValueError("dataset mnist:PATH needs the directory of the MNIST IDX files; "
                             "got 'mnist'")
        return load_mnist(arg)
    raise ValueError(f"dataset must be 'digits' or 'mnist:PATH'; got {spec!r}")
