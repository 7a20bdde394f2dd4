"""Pairwise agreement and the Minimum Detectable Ability Difference (MDAD; Yauney et al., "How
Reliable is Language Model Micro-Benchmarking?", Section 3, Eqs. 4-5).

For target models ``A < B`` (every one of the ``C(T, 2)`` pairs of a trial), the reference
difference is ``Delta_ref = acc_ref(A) - acc_ref(B)`` (the "full benchmark": in the released code
the *seen* half the micro-benchmark was drawn from, or the held-out *unseen* half) and the
micro-benchmark's is ``Delta_micro = est(A) - est(B)``. A pair is *correct* when both have the
same sign and ``Delta_micro != 0``: ties on the micro-benchmark count as wrong, and a tie on the
reference counts as "A is better" (the released code's ``copysign(1, 0.0) = 1``;
``plot_utils.make_tidy_results``). Pairs are binned by ``|Delta_ref|``:

- ``Binning.arithmetic = "exact"`` (default): with integer correct counts ``c`` over ``n``
  reference items, bin ``floor(|c_A - c_B| * R / n)`` in integers, ``R = 100 / resolution``
  bins per unit of accuracy (0.5 points: 200). The released code floors ``|c_A/n - c_B/n| * R``
  in floating point, which misbins exact bin edges (34/224 - 6/224 lands in 0.12, not 0.125);
  ``"float"`` reproduces it, and with it the code's re-flooring of the bin labels when it scans
  them for MDAD (``mdad.calculate_mdad``: ``floor((j/200) * 200)`` is ``j - 1`` for j = 29, 57,
  58, 113-116, so those bins are looked up under their neighbour's label and MDAD can never be,
  e.g., 14.5 points).
- ``Binning.centred = False`` (default, the code): bins ``[j, j+1) * resolution`` labelled by
  their left edge; ``True`` (the text: ``{[0, 0.25), [0.25, 0.75), ...}`` at 0.5 points) rounds
  instead, labelled by the centre.

**Agreement** of a bin (Eq. 4) is the share of correct pairs in it, pooled over trials. **MDAD**
(Eq. 5) is the label of the first bin, in ascending order, whose agreement reaches the threshold
(0.8); ``sentinel`` (50 points) when none does. Labels are in accuracy points.

Intervals:

- :func:`pair_bootstrap_interval` -- the released code's (``mdad.bootstrap_mean_ci``): per bin,
  the 2.5/97.5% quantiles of ``B = 1000`` bootstrap means of the bin's pooled 0/1 pair outcomes
  (drawn here as binomial counts, the same distribution); the lower MDAD bound is the first bin
  whose *upper* quantile reaches the threshold, the upper bound the first whose *lower* one does,
  each defaulting to the sentinel; the interval is then made symmetric by its larger side, so its
  lower end can be negative (as in the published CSVs).
- :func:`trial_bootstrap_interval` -- resamples whole trials with replacement and recomputes MDAD:
  pairs of one trial share their models and items, so the pair bootstrap understates how much
  MDAD moves between reruns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

ARITHMETIC = ("exact", "float")


@dataclass(frozen=True)
class Binning:
    """How pairs are binned by their reference difference: ``resolution`` in accuracy points
    (0.5; 100 / resolution must be an integer), ``centred`` buckets (the text) or left-closed
    ones (the code, default), ``arithmetic`` ``"exact"`` (integers) or ``"float"`` (the code)."""

    resolution: float = 0.5
    centred: bool = False
    arithmetic: str = "exact"

    def __post_init__(self) -> None:
        per_unit = 100.0 / self.resolution
        if self.resolution <= 0 or abs(per_unit - round(per_unit)) > 1e-9:
            raise ValueError(f"binning resolution must divide 100 accuracy points, got {self.resolution}")
        if self.arithmetic not in ARITHMETIC:
            raise ValueError(f"binning arithmetic must be one of {ARITHMETIC}, got {self.arithmetic!r}")
        if self.centred and self.arithmetic == "float":
            raise ValueError("centred bins are computed exactly; use arithmetic 'exact'")

    @property
    def per_unit(self) -> int:
        """Bins per unit of accuracy (0.5 points: 200)."""
        return round(100.0 / self.resolution)

    def label(self, index: np.ndarray) -> np.ndarray:
        """Bins' labels in accuracy points: left edge, or centre for centred buckets (same value:
        centred bucket ``j`` is ``[j - 1/2, j + 1/2) * resolution``)."""
        return np.asarray(index, dtype=np.float64) * self.resolution

    def index(self, counts_a: np.ndarray, counts_b: np.ndarray, n_items: int) -> np.ndarray:
        """Bin of each pair from the two models' correct counts over ``n_items`` reference items."""
        counts_a = np.asarray(counts_a, dtype=np.int64)
        counts_b = np.asarray(counts_b, dtype=np.int64)
        if self.arithmetic == "float":
            diff = np.abs(counts_a / n_items - counts_b / n_items)
            return np.floor(diff * self.per_unit).astype(np.int64)
        scaled = np.abs(counts_a - counts_b) * self.per_unit
        if self.centred:
            return (2 * scaled + n_items) // (2 * n_items)
        return scaled // n_items

    def scan_order(self, present: np.ndarray) -> np.ndarray:
        """The bin looked up for each present bin, ascending. Exact: themselves. Float: the code's
        re-floored label ``floor((j / R) * R)``, which for a few ``j`` is ``j - 1``."""
        present = np.sort(np.asarray(present, dtype=np.int64))
        if self.arithmetic == "exact":
            return present
        return np.floor((present / self.per_unit) * self.per_unit).astype(np.int64)


def pair_outcomes(
    estimates: np.ndarray, counts: np.ndarray, n_items: int, binning: Binning = Binning()
) -> tuple[np.ndarray, np.ndarray]:
    """Bins and correctness of every pair ``A < B`` of one trial's targets.

    ``estimates``: the micro-benchmark's estimate per target (any scale); ``counts``: each
    target's number of correct reference items out of ``n_items``. Pairs in
    ``itertools.combinations`` order. Returns ``(bins, correct)``, int64 and bool.
    """
    est = np.asarray(estimates, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    if est.shape != counts.shape or est.ndim != 1:
        raise ValueError(f"estimates {est.shape} and counts {counts.shape} must be equal-length vectors")
    a, b = np.triu_indices(len(est), k=1)
    micro = est[a] - est[b]
    reference_sign = np.where(counts[a] >= counts[b], 1.0, -1.0)  # a reference tie counts as "A better"
    correct = (np.sign(micro) == reference_sign) & (micro != 0)
    return binning.index(counts[a], counts[b], n_items), correct


@dataclass(frozen=True)
class BinCounts:
    """Pairs and correct pairs per bin, per trial: arrays ``(trials, bins)`` over bins
    ``0 .. n_bins - 1``."""

    pairs: np.ndarray
    correct: np.ndarray

    @property
    def pooled(self) -> tuple[np.ndarray, np.ndarray]:
        return self.pairs.sum(axis=0), self.correct.sum(axis=0)


def bin_counts(outcomes: list[tuple[np.ndarray, np.ndarray]]) -> BinCounts:
    """Per-trial pair counts per bin from :func:`pair_outcomes` of each trial."""
    n_bins = 1 + max((int(bins.max()) for bins, _ in outcomes if len(bins)), default=0)
    pairs = np.zeros((len(outcomes), n_bins), np.int64)
    correct = np.zeros((len(outcomes), n_bins), np.int64)
    for t, (bins, ok) in enumerate(outcomes):
        pairs[t] = np.bincount(bins, minlength=n_bins)
        correct[t] = np.bincount(bins, weights=ok, minlength=n_bins).astype(np.int64)
    return BinCounts(pairs, correct)


def agreement_table(counts: BinCounts, binning: Binning = Binning()) -> pd.DataFrame:
    """Pooled agreement per bin that has pairs: columns ``bin`` (points), ``agreement``, ``pairs``."""
    pairs, correct = counts.pooled
    present = np.flatnonzero(pairs)
    return pd.DataFrame(
        {"bin": binning.label(present), "agreement": correct[present] / pairs[present], "pairs": pairs[present]}
    )


@dataclass(frozen=True)
class Criterion:
    """What MDAD is: the first bin whose agreement reaches ``threshold`` (0.8), bins as ``binning``
    says, ``sentinel`` points (50) when none does."""

    threshold: float = 0.8
    binning: Binning = Binning()
    sentinel: float = 50.0

    @classmethod
    def from_settings(cls, settings) -> Criterion:
        """From a config mapping with ``threshold``, ``sentinel``, ``resolution``, ``centred`` and
        ``arithmetic`` (config ``mdad.agreement``)."""
        binning = Binning(settings["resolution"], settings["centred"], settings["arithmetic"])
        return cls(settings["threshold"], binning, settings["sentinel"])

    def first_reaching(self, agreement: np.ndarray, present: np.ndarray) -> float:
        """Label (points) of the first bin of ``present`` -- scanned as :meth:`Binning.scan_order`
        says -- whose ``agreement`` (indexed by bin; NaN where a bin has no pairs) reaches the
        threshold; the sentinel if none."""
        for looked_up in self.binning.scan_order(present):
            if looked_up < len(agreement) and agreement[looked_up] >= self.threshold:
                return float(self.binning.label(looked_up))
        return float(self.sentinel)

    def of(self, pairs: np.ndarray, correct: np.ndarray) -> float:
        """MDAD from pair and correct counts per bin."""
        with np.errstate(invalid="ignore", divide="ignore"):
            agreement = np.where(pairs > 0, correct / np.maximum(pairs, 1), np.nan)
        return self.first_reaching(agreement, np.flatnonzero(pairs))


def mdad(counts: BinCounts, criterion: Criterion = Criterion()) -> float:
    """MDAD in accuracy points (Eq. 5) from the pooled pairs of every trial."""
    return criterion.of(*counts.pooled)


def per_trial_mdad(counts: BinCounts, criterion: Criterion = Criterion()) -> np.ndarray:
    """MDAD of each trial on its own pairs (``(trials,)``, points)."""
    return np.array([criterion.of(p, c) for p, c in zip(counts.pairs, counts.correct)])


@dataclass(frozen=True)
class Interval:
    mdad: float
    lower: float
    upper: float


def pair_bootstrap_interval(
    counts: BinCounts,
    rng: np.random.Generator,
    criterion: Criterion = Criterion(),
    n_boot: int = 1000,
    level: float = 0.95,
) -> Interval:
    """The released code's MDAD interval (module docstring): per-bin bootstrap of pooled pairs,
    first crossings of the quantiles, made symmetric by the larger side."""
    pairs, correct = counts.pooled
    present = np.flatnonzero(pairs)
    low = np.full(len(pairs), np.nan)
    high = np.full(len(pairs), np.nan)
    for j in present:  # bins in ascending order: the draws do not depend on the threshold
        means = rng.binomial(pairs[j], correct[j] / pairs[j], size=n_boot) / pairs[j]
        low[j], high[j] = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    point = criterion.of(pairs, correct)
    first_upper = criterion.first_reaching(high, present)  # -> the lower bound
    first_lower = criterion.first_reaching(low, present)  # -> the upper bound
    half = max(point - first_upper, first_lower - point)
    return Interval(point, point - half, point + half)


def trial_bootstrap_interval(
    counts: BinCounts,
    rng: np.random.Generator,
    criterion: Criterion = Criterion(),
    n_boot: int = 1000,
    level: float = 0.95,
) -> Interval:
    """Percentile interval of MDAD over ``n_boot`` resamples of whole trials (with replacement)."""
    n_trials = counts.pairs.shape[0]
    weights = rng.multinomial(n_trials, np.full(n_trials, 1.0 / n_trials), size=n_boot)
    values = np.array([criterion.of(p, c) for p, c in zip(weights @ counts.pairs, weights @ counts.correct)])
    lower, upper = np.quantile(values, [(1 - level) / 2, 1 - (1 - level) / 2])
    return Interval(mdad(counts, criterion), float(lower), float(upper))
