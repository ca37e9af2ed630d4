"""The one numerics layer every bound uses, split by concern.

Everything here is private-kernel style (scipy.stats' "public validates, private
computes"): callers pass valid input, functions are vectorised and never validate.

* ``search``     — the certified 1-D searches: one signature, one ``SearchResult``, a NaN
                   guard (bisection, Illinois falling root, calibration target, integers,
                   golden section).
* ``binomial``   — Loader's log-pmf, half-binomial walks, certified tail series and the one
                   tail rule (``binom_tail_upper`` / ``binom_log_tail_upper``).
* ``logspace``   — log1pexp, logexpm1, log-binomial coefficients, logsumexp, and the
                   cancellation-free pieces of the Rényi sums.
* ``divergence`` — hockey-stick and Rényi divergences of pmfs given by their logs.
* ``fft``        — certified FFT powers (circular self-convolutions with an error bound).
* ``lattice_fourier`` — certified Σ_{s≥1} w_s·Q(s) for an n-fold lattice convolution Q by a
                   trapezoid Fourier inversion on its live frequencies (the blanket's sums
                   at large n; imported from its module).
* ``rounding``   — ``REL_SLACK`` / ``round_up``, the slack every upper bound gets.
* ``steps``      — drivers of step generators (computations that hand their inner
                   evaluations out, so many run side by side in one numpy batch per round).
* ``berry_esseen`` — a certified lower bound on a T-fold composed δ from three moments of
                   the loss (floors; imported from its module).

Every name is re-exported here: ``from shuffledp.numerics import X`` works for all of them.
"""

from __future__ import annotations

from .binomial import (BDTR_MAX_N, BDTR_SLACK, RUN_REL_ERR, accumulate_rows, bd0,
                       binom_cdf_bounds, binom_cdf_bounds_many, binom_log_tail_bound, binom_log_tail_upper,
                       binom_logpmf, binom_logpmf_pairs, binom_sf_bounds, binom_tail_mass,
                       binom_tail_upper, binom_window, half_binom_logpmf,
                       half_binom_logpmf_runs, half_binom_pmf_walk, rademacher_log_moments,
                       stirlerr)
from .divergence import hockey_stick, hockey_stick_lower, renyi_minus_one
from .fft import circular_run, fft_power, fft_power_product, fft_powers, next_fast_len
# The certified FFTs' malloc setting (once per process), public for the CLI, which applies
# it when a fresh process starts a question (before the question's first large arrays).
from .fft import _keep_freed_memory as keep_freed_memory
from .logspace import (expm1mx, log1pexp, log1pmx, log_binom_coef, log_pow_minus_tangent,
                       logexpm1, logsumexp, logsumexp_rows, pow_minus_tangent)
from .rounding import REL_SLACK, round_up
from .search import (MAX_ITER, RTOL, XTOL, SearchError, SearchResult, bisect, bisect_certified,
                     falling_log_root, falling_root, falling_root_certified, golden,
                     golden_integer, golden_min, illinois_root, illinois_steps,
                     increasing_root, integer_search, target_root)
from .steps import run_steps, run_steps_many

__all__ = [
    "REL_SLACK",
    "round_up",
    "stirlerr",
    "bd0",
    "binom_logpmf",
    "binom_window",
    "binom_tail_mass",
    "accumulate_rows", "binom_cdf_bounds",
    "binom_sf_bounds",
    "log_binom_coef",
    "logsumexp",
    "hockey_stick",
    "renyi_minus_one",
    "bisect_certified",
    "expm1mx",
    "log1pmx",
    "pow_minus_tangent",
    "log_pow_minus_tangent",
    "binom_log_tail_bound",
    "next_fast_len",
    "fft_power",
    "fft_power_product",
    "golden_min",
    "increasing_root",
    "BDTR_MAX_N",
    "RUN_REL_ERR",
    "binom_cdf_bounds_many",
    "binom_logpmf_pairs",
    "half_binom_logpmf",
    "half_binom_logpmf_runs",
    "half_binom_pmf_walk",
    "rademacher_log_moments",
    "hockey_stick_lower",
    "circular_run",
    "fft_powers",
    "falling_root_certified",
    "falling_log_root",
    # added with the package split
    "binom_tail_upper",
    "binom_log_tail_upper",
    "BDTR_SLACK",
    "log1pexp",
    "logexpm1",
    "logsumexp_rows",
    "XTOL",
    "RTOL",
    "MAX_ITER",
    "SearchResult",
    "SearchError",
    "bisect",
    "falling_root",
    "target_root",
    "integer_search",
    "golden",
    "golden_integer",
    "illinois_root",
    "illinois_steps",
    "run_steps",
    "run_steps_many",
    "keep_freed_memory",
]
