"""The twelve completion methods of BenchPress Appendix C.1.

Every completer takes the transformed, column-standardized training matrix ``Z``
(models x benchmarks, NaN = missing) and returns a full matrix of the same shape in the
same space: observed cells keep their value, missing cells get the method's prediction,
or NaN where the method cannot predict (BenchReg / ModelReg leave such cells empty, which
is what the paper's *coverage* counts).

Where the paper's equations and its released code differ, the code is followed, because
the code produced the paper's numbers; each such point is said in the function's docstring:

* Bias ALS (eq. 13) *learns* the model and benchmark offsets jointly with the rank-R
  factors, each block a ridge regression on ``[1, V_b]`` (resp. ``[1, U_m]``) with the same
  lambda, and the global level as the unregularized residual mean; eq. 13 as printed fixes
  the offsets at the observed means. Set ``offsets="observed_means"`` for the printed form.
* BenchReg / ModelReg rank candidate predictors by R^2 over >= 5 shared observations,
  take the top ``k`` and only then drop those below ``R^2_min`` (so fewer than ``k`` may
  remain).
* NMF / PMF use the code's plain gradient steps (NMF: 500 steps, lr 5e-4, L2 1e-2, shift
  ``-min + 0.1`` of columns with a negative minimum; PMF: 300 steps, lr 1e-3, L2 0.1),
  initialised from ``RandomState(42)``; Nuclear norm is proximal gradient (200 steps,
  step 0.1) from the column means.
* MLP is written in numpy (no deep-learning dependency): Linear(B, 32) - ReLU -
  Linear(32, B), torch's default uniform initialisation and Adam, masked mean squared
  error, 500 full-batch epochs, averaged over 3 seeds. Its random numbers differ from
  torch's, so it cannot match the paper bit for bit.

All loops over models or benchmarks are replaced by masked matrix products (BenchKNN / BenchReg
take their pairwise moments from :func:`benchcast.completion.correlation.pair_moments`); the Bias
ALS solver batches the per-row ridge systems over rows *and* ensemble members.

The methods live in :mod:`.memory_based` (means, KNN, regression ensembles), :mod:`.als`
(Bias ALS) and :mod:`.low_rank` (Soft-Impute, NMF, PMF, nuclear norm, MLP); this module holds
the registry and re-exports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from benchcast.completion.als import bias_als, bias_als_batch, bias_als_reference
from benchcast.completion.low_rank import mlp, nmf, nuclear_norm, pmf, soft_impute
from benchcast.completion.memory_based import bench_knn, bench_reg, benchmark_mean, model_knn, model_mean, model_reg
from benchcast.errors import ConfigError

__all__ = [
    "Completer",
    "COMPLETERS",
    "get_completer",
    "complete",
    "benchmark_mean",
    "model_mean",
    "bench_knn",
    "model_knn",
    "bench_reg",
    "model_reg",
    "soft_impute",
    "bias_als",
    "bias_als_batch",
    "bias_als_reference",
    "nmf",
    "pmf",
    "nuclear_norm",
    "mlp",
]


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Completer:
    """A completion method: its function, the paper's label and hyper-parameter grid (Sec. 4.2)."""

    name: str
    label: str
    fn: Callable[..., np.ndarray]
    grid: list[dict] = field(default_factory=lambda: [{}])


COMPLETERS: dict[str, Completer] = {
    c.name: c
    for c in [
        Completer("benchmark_mean", "Bench-Mean", benchmark_mean),
        Completer("model_mean", "Model-Mean", model_mean),
        Completer("bench_knn", "Bench-KNN", bench_knn, [{"k": k} for k in (3, 5, 7, 10)]),
        Completer("model_knn", "Model-KNN", model_knn, [{"k": k} for k in (3, 5, 7, 10)]),
        Completer(
            "bench_reg", "BenchReg", bench_reg, [{"k": k, "min_r2": r} for k in (3, 5, 7) for r in (0.1, 0.2, 0.3)]
        ),
        Completer(
            "model_reg", "ModelReg", model_reg, [{"k": k, "min_r2": r} for k in (3, 5, 7) for r in (0.1, 0.2, 0.3)]
        ),
        Completer("soft_impute", "Soft-Impute", soft_impute, [{"rank": 2}]),
        Completer("bias_als", "Bias ALS", bias_als, [{"rank": 2, "lam": lam} for lam in (0.01, 0.1, 1.0)]),
        Completer("nmf", "NMF", nmf, [{"rank": r} for r in (1, 2, 3, 5)]),
        Completer("pmf", "PMF", pmf, [{"rank": r} for r in (1, 2, 3, 5)]),
        Completer("nuclear_norm", "Nuclear", nuclear_norm, [{"lam": lam} for lam in (0.1, 0.5, 1.0, 5.0)]),
        Completer("mlp", "MLP", mlp, [{"lr": lr} for lr in (1e-4, 1e-3, 1e-2)]),
    ]
}


def get_completer(name: str) -> Completer:
    try:
        return COMPLETERS[name]
    except KeyError:
        raise ConfigError(f"unknown completion method {name!r}; choose one of {sorted(COMPLETERS)}") from None


def complete(name: str, Z: np.ndarray, **params) -> np.ndarray:
    """Run completer ``name`` on the standardized matrix ``Z`` with hyper-parameters ``params``."""
    comp = get_completer(name)
    try:
        return comp.fn(Z, **params)
    except TypeError as exc:
        raise ConfigError(f"bad hyper-parameters {params} for completion method {name!r}: {exc}") from None
