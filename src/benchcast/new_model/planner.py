"""A budget planner for micro-benchmarks: how many items tell apart two models ``d`` accuracy points
apart, ``threshold`` (80%) of the time -- the question MDAD (Yauney et al., Eq. 5) answers
empirically, here by a normal approximation.

Two models A (better by ``d``, a fraction) and B disagree on a share ``q`` of the benchmark's
items. On ``k`` items drawn uniformly without replacement from a pool of ``N``, the difference of
their correct counts has mean ``k d`` and variance ``k (q - d^2) (N - k) / (N - 1)`` (each item
adds +1, -1 or 0; the last factor is the finite-pool correction). The micro-benchmark ranks them
right when that difference is at least one item -- a tie counts as wrong, as in MDAD -- so, with the
continuity correction,

    P(right) = Phi((d - 1 / (2k)) / sigma),   sigma^2 = (q - d^2) / k * (N - k) / (N - 1).

Without the correction and an infinite pool this is the textbook ``k = z^2 (q - d^2) / d^2`` (``z``
the threshold's normal quantile). On MuSR the corrected form reproduces the empirical MDAD of
uniform sampling at k = 25-250 within one 0.5-point bin; the uncorrected one is 5 bins optimistic at
k = 25 (tests/unit/new_model/test_planner.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from benchcast.blas import rows_gram
from benchcast.stats.mdad import Binning


def agreement_probability(d, q, k: int, pool: int | None = None, continuity: bool = True) -> np.ndarray:
    """P(a uniform ``k``-item micro-benchmark ranks the better model first), module docstring.
    ``d`` >= 0 and ``q`` (fractions) broadcast; ``pool`` None is an infinite pool."""
    d, q = np.asarray(d, dtype=np.float64), np.asarray(q, dtype=np.float64)
    fpc = 1.0 if pool is None else max(pool - k, 0) / max(pool - 1, 1)
    variance = np.maximum(q - d**2, 0.0) / k * fpc
    shift = d - (0.5 / k if continuity else 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(variance > 0, shift / np.sqrt(variance), np.where(shift > 0, np.inf, -np.inf))
    return norm.cdf(z)


def required_items(
    d: float, q: float, threshold: float = 0.8, pool: int | None = None, continuity: bool = True
) -> int | None:
    """The smallest ``k`` whose :func:`agreement_probability` reaches ``threshold`` (at most ``pool``;
    at most 10^7 without one); None if no ``k`` does (``d = 0``). Two models that differ by ``d``
    disagree on at least a share ``d`` of the items: ``q < d`` is a ValueError."""
    if q < d or not 0 <= q <= 1:
        raise ValueError(f"a disagreement rate q={q} is impossible for an accuracy difference d={d} (need d <= q <= 1)")
    upper = pool if pool is not None else 10**7
    if d <= 0 or agreement_probability(d, q, upper, pool, continuity) < threshold:
        return None
    lo, hi = 1, upper
    while lo < hi:  # P is increasing in k on the range that matters; bisect the first k that reaches it
        mid = (lo + hi) // 2
        if agreement_probability(d, q, mid, pool, continuity) >= threshold:
            hi = mid
        else:
            lo = mid + 1
    return int(lo)


def model_pairs(scores: np.ndarray) -> pd.DataFrame:
    """Every pair ``a < b`` of models (rows of a 0/1 models x items matrix): ``a, b``, ``d`` (their
    absolute accuracy difference) and ``q`` (the share of items they answer differently)."""
    scores = np.asarray(scores, dtype=np.float64)
    a, b = np.triu_indices(len(scores), k=1)
    acc = scores.mean(axis=1)
    n = scores.shape[1]
    both = rows_gram(scores)
    right = np.diag(both)
    disagree = (right[:, None] + right[None, :] - 2 * both) / n  # |x - y| summed over 0/1 items
    return pd.DataFrame({"a": a, "b": b, "d": np.abs(acc[a] - acc[b]), "q": disagree[a, b]})


def approximate_mdad(
    pairs: pd.DataFrame,
    k: int,
    threshold: float = 0.8,
    pool: int | None = None,
    binning: Binning | None = None,
    continuity: bool = True,
    sentinel: float = 50.0,
) -> float:
    """MDAD (points) of uniform sampling of ``k`` items predicted from the benchmark's model pairs
    (:func:`model_pairs`): the pairs binned by ``d`` as MDAD bins them, each bin's agreement the
    mean of its pairs' :func:`agreement_probability`; the first bin reaching ``threshold``.
    ``binning``: MDAD's default 0.5-point bins."""
    binning = binning or Binning()
    counts = np.round(pairs["d"].to_numpy() * binning.per_unit * 1e6) / 1e6  # exact multiples stay exact
    bins = np.floor(counts).astype(np.int64)
    p = agreement_probability(pairs["d"].to_numpy(), pairs["q"].to_numpy(), k, pool, continuity)
    agreement = pd.Series(p).groupby(bins).mean()
    for b, value in agreement.items():
        if value >= threshold:
            return float(binning.label(np.array([b]))[0])
    return float(sentinel)
