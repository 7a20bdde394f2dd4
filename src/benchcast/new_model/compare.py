"""``compare``: two or more models' answers on one selection, and each pairwise difference of their
full-benchmark scores with a paired interval and a verdict in words (``benchcast compare``).

Two models that answer the same items are compared far better than their two intervals say: most
items they answer alike, and what each estimate gets wrong about one it tends to get wrong about
the other. The interval of a difference is therefore calibrated on **pairs** of the leaderboard's
own models held out together: the stored fit's calibration folds (:mod:`benchcast.new_model.fits`)
estimate every model of a fold from a fit that never saw the fold, each model answering alone as a
new model does, so two models of one fold are two new models on one selection. For such a pair
``(a, b)`` the fit keeps the error of the estimated difference, ``e = (est_b - est_a) - (true_b -
true_a)``, and ``differing``: how much their answers differ on the items both answered (for 0/1
scores, the items they answered differently).

The interval is split-conformal with a normalised score (locally weighted conformal prediction;
Lei, G'Sell, Rinaldo, Tibshirani & Wasserman 2018, Section 5.2): the score of a calibration pair
is ``|e| / sqrt(differing + 1)``, and a new pair that differs on ``d`` of its answered items gets
``est_b - est_a +- q * sqrt(d + 1)``, ``q`` the ``ceil((m + 1) level)``-th smallest of the ``m``
calibration scores. The scale is that of a mean of ``d`` nonzero differences among the answered
items (a model pair that answers alike is estimated alike, and the difference of their true scores
is small): close pairs get narrow intervals, far apart pairs wide ones.

That scale is right for some methods and not for others, and no scale of a known quantity sees
what matters most: an estimate that shrinks towards the leaderboard errs on a pair in proportion to
the pair's true difference, so on two models of about equal score (two checkpoints) it errs far less
than on two far apart models with as many differing answers. The quantile is therefore taken per
band of the **true** difference (a label-conditional Mondrian conformal predictor, Vovk, Gammerman &
Shafer 2005, Section 4.5, whose taxonomy may depend on the label; :func:`paired_calibration`): the
calibration pairs are cut at the quintiles of their ``|true_b - true_a|``, each band has its own
``q_k``, and the interval of a new pair is the hull of every difference ``t`` the pair's band of
``|t|`` admits, ``|est_b - est_a - t| <= q_k(|t|) sqrt(d + 1)``. The coverage then holds within each
band of true differences -- on close pairs too, where one quantile for all pairs would be too wide --
not only over all pairs. The hull reaches as far as any band's quantile does, so every band must
hold :data:`TRUTH_BAND_PAIRS` pairs (fewer bands where they would not). A leaderboard too small for
two such bands (HELM's GSM, 83 models: about 190 calibration pairs) gets bands of ``differing``
instead (tertiles, :data:`MIN_PAIRS` pairs each at least; ``diff +- q_k sqrt(d + 1)``): in the held-out
test they covered GSM's close pairs better than bands of the truth of 38-63 pairs each at seed 0,
and as well at seed 1 (2026-12-07, docs/studies/heldout_intervals.md). With fewer pairs still: one quantile for all.

A method whose estimator is linear in the answers and has a variance of its own (Random-Sampling: a
mean of the core set; AIPW: its jackknife; :meth:`benchcast.methods.base.Method.difference_standard_error`)
gives the pair its **own** interval instead (``interval="auto"``, the default, as ``estimate``'s):
the difference of the two estimates is the method's estimate of the two models' per-item answer
differences on its core set, so its standard error is that of those differences, ``diff +- z se``.
The conformal paired interval is reported beside it (``conformal_lower``, ``conformal_upper``).

When an interval holds zero the verdict says so, with the smallest difference this method tells
apart at this budget: MDAD (Yauney et al., "How Reliable is Language Model Micro-Benchmarking?",
Section 3, Eq. 5) computed on the same held-out pairs (:mod:`benchcast.stats.mdad`: the first
0.5-point bin of true difference in which at least 80% of the pairs are ordered correctly).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from benchcast.data.answers import Answers
from benchcast.errors import ConfigError, DataError
from benchcast.methods import REGISTRY
from benchcast.methods.base import Method
from benchcast.new_model.api import INTERVALS, budget_of_selection, check_count, check_method, estimate_from, stored_fit
from benchcast.new_model.fits import DEFAULT_FOLDS, conformal_halfwidth
from benchcast.new_model.leaderboard import Leaderboard, load_leaderboard
from benchcast.stats.mdad import Binning, Criterion

#: at least this many calibration pairs for a paired interval at all
MIN_PAIRS = 20


def pair_scores(pairs: pd.DataFrame) -> np.ndarray:
    """Each calibration pair's normalised score ``|e| / sqrt(differing + 1)`` (module docstring)."""
    error = pairs["estimate_diff"].to_numpy(float) - pairs["truth_diff"].to_numpy(float)
    return np.abs(error) / np.sqrt(pairs["differing"].to_numpy(float) + 1.0)


def paired_quantile(pairs: pd.DataFrame, level: float) -> float:
    """``q``: the ``ceil((m + 1) level)``-th smallest pair score (infinite when ``m`` is too small)."""
    if not 0 < level < 1:
        raise ConfigError(f"interval level must be between 0 and 1, got {level}")
    scores = np.sort(pair_scores(pairs))
    k = math.ceil((len(scores) + 1) * level)
    return float(scores[k - 1]) if len(scores) >= MIN_PAIRS and k <= len(scores) else math.inf


#: the calibration pairs are cut into this many bands of ``|true difference|`` (quintiles) ...
TRUTH_BANDS = 5
#: ... where each band holds at least this many: the interval is a hull over every band, so one
#: band's noisy quantile would widen every pair's interval
TRUTH_BAND_PAIRS = 100
#: otherwise into this many bands of ``differing`` (tertiles), each of at least :data:`MIN_PAIRS`
DIFFERING_BANDS = 3


@dataclass(frozen=True)
class PairedCalibration:
    """The paired quantile per band (module docstring): ``edges`` the bands' cuts (a value at or
    above ``edges[k - 1]`` and below ``edges[k]`` is in band ``k``), ``quantiles`` each band's ``q``;
    ``by`` what the bands cut: ``truth`` (``|true_b - true_a|``) or ``differing``."""

    edges: tuple[float, ...]
    quantiles: tuple[float, ...]
    by: str = "truth"

    def interval(self, diff: float, differing: float) -> tuple[float, float]:
        """Bands of ``differing``: ``diff +- q sqrt(differing + 1)``, ``q`` the pair's band's. Bands of
        the truth: the hull of the differences ``t`` with ``|diff - t| <= q(|t|) sqrt(differing + 1)``
        (never empty: ``diff`` itself is admitted by its own band). Within the possible differences [-1, 1]."""
        scale = math.sqrt(differing + 1.0)
        if self.by == "differing":
            q = self.quantiles[bisect.bisect_right(self.edges, differing)]
            return max(-1.0, diff - q * scale), min(1.0, diff + q * scale)
        lower, upper = math.inf, -math.inf
        for low, high, q in zip((0.0, *self.edges), (*self.edges, math.inf), self.quantiles):
            for side_low, side_high in ((low, high), (-high, -low)):  # the band's t >= 0 and t <= 0
                lo, hi = max(diff - q * scale, side_low), min(diff + q * scale, side_high)
                if lo <= hi:
                    lower, upper = min(lower, lo), max(upper, hi)
        return max(-1.0, lower), min(1.0, upper)


def _bands(values: np.ndarray, most: int, least: int):
    """The cuts at the ``k``-quantiles of ``values`` (ties kept in one band) and each value's band,
    for the largest ``k <= most`` whose every band holds ``least`` values; None below two bands."""
    for count in range(min(most, len(values) // least), 1, -1):
        edges = np.unique(np.quantile(values, np.arange(1, count) / count))
        edges = edges[edges > values.min()]  # a cut at the smallest value would leave an empty band
        band = np.searchsorted(edges, values, side="right")
        if len(edges) and np.bincount(band, minlength=len(edges) + 1).min() >= least:
            return edges, band
    return None


def paired_calibration(
    pairs: pd.DataFrame, level: float, bands: int = TRUTH_BANDS, band_pairs: int = TRUTH_BAND_PAIRS
) -> PairedCalibration:
    """:class:`PairedCalibration` from calibration pairs: bands of ``|truth_diff|`` (up to ``bands``,
    each of ``band_pairs`` pairs at least), else bands of ``differing`` (up to
    :data:`DIFFERING_BANDS`, each of :data:`MIN_PAIRS`), else one band; each band's
    :func:`paired_quantile`."""
    for by, values, most, least in (
        ("truth", np.abs(pairs["truth_diff"].to_numpy(float)), bands, band_pairs),
        ("differing", pairs["differing"].to_numpy(float), DIFFERING_BANDS, MIN_PAIRS),
    ):
        cut = _bands(values, most, least)
        if cut is not None:
            edges, band = cut
            quantiles = tuple(paired_quantile(pairs[band == k], level) for k in range(len(edges) + 1))
            return PairedCalibration(tuple(float(e) for e in edges), quantiles, by)
    return PairedCalibration((), (paired_quantile(pairs, level),))


def paired_interval(diff: float, differing: float, q: float) -> tuple[float, float]:
    """``diff +- q sqrt(differing + 1)``, within the possible differences [-1, 1] (one band)."""
    return PairedCalibration((), (q,)).interval(diff, differing)


def detectable_difference(pairs: pd.DataFrame, items: int, criterion: Criterion | None = None) -> float:
    """MDAD in accuracy points on the held-out pairs: the first bin of true difference whose pairs
    the estimates order correctly at least ``criterion.threshold`` of the time (a tie of the
    estimates is wrong, a tie of the truth counts as "the first is better", as the paper's code)."""
    criterion = criterion or Criterion()
    truth = pairs["truth_diff"].to_numpy(float)
    est = pairs["estimate_diff"].to_numpy(float)
    counts = np.rint(np.abs(truth) * items).astype(np.int64)
    bins = Binning().index(np.zeros_like(counts), counts, items)
    reference = np.where(truth <= 0, 1.0, -1.0)  # sign of a - b; a tie: "a is better"
    correct = (np.sign(-est) == reference) & (est != 0)
    n_bins = int(bins.max()) + 1 if len(bins) else 1
    pairs_per_bin = np.bincount(bins, minlength=n_bins)
    correct_per_bin = np.bincount(bins, weights=correct, minlength=n_bins).astype(np.int64)
    return criterion.of(pairs_per_bin, correct_per_bin)


def has_own_paired_interval(method: str) -> bool:
    """``method`` (a registry name) gives a pair of models an interval of its own (module docstring)."""
    own = getattr(REGISTRY[method], "difference_standard_error", None)
    return own is not None and own is not Method.difference_standard_error


def own_difference_se(fit, first: Mapping, second: Mapping, item_ids: Sequence[str] | None = None) -> float | None:
    """The fitted method's own standard error of ``second - first`` (answers ``{item: score}``, an
    item its column in the leaderboard, or its id in ``item_ids`` where given) from their differences
    on its core set; None where it has none, or where either model did not answer its whole core set."""
    core = getattr(fit.method, "coreset_", None)
    if core is None or not has_own_paired_interval(fit.meta["method"]):
        return None
    items = np.asarray(core).tolist() if item_ids is None else [item_ids[j] for j in np.asarray(core).tolist()]
    if any(item not in first or item not in second for item in items):
        return None
    return fit.method.difference_standard_error(np.array([second[i] - first[i] for i in items], dtype=np.float64))


def paired_intervals(
    fit,
    first: Mapping,
    second: Mapping,
    diff: float,
    calibration: PairedCalibration,
    level: float,
    interval: str,
    item_ids=None,
) -> tuple[float, float, float, float, bool]:
    """``(lower, upper, conformal_lower, conformal_upper, own)``: the pair's interval (its method's own
    where ``interval`` allows and it has one, else the conformal one, from ``calibration``) and the
    conformal one; answers keyed as :func:`own_difference_se` takes them."""
    differing, _ = differing_on_shared(first, second)
    c_lower, c_upper = calibration.interval(diff, differing)
    se = own_difference_se(fit, first, second, item_ids) if interval != "conformal" else None
    if se is None:
        return c_lower, c_upper, c_lower, c_upper, False
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return max(-1.0, diff - z * se), min(1.0, diff + z * se), c_lower, c_upper, True


def differing_on_shared(a: Mapping, b: Mapping) -> tuple[float, int]:
    """How much two models' answers (``{item: score}``) differ on the items both answered -- the
    sum of ``|score_a - score_b|``, for 0/1 scores the items answered differently -- and how many
    those items are."""
    shared = sorted(set(a) & set(b))
    return float(sum(abs(a[j] - b[j]) for j in shared)), len(shared)


def verdict(first: str, second: str, diff: float, lower: float, upper: float, level: float, mdad: float) -> str:
    """The pair's verdict in words, in accuracy points."""
    text = f"{second} - {first} = {100 * diff:+.1f} points [{100 * lower:+.1f}, {100 * upper:+.1f}]"
    if lower > 0:
        return f"{text}: {second} is better ({level:.0%} paired interval)"
    if upper < 0:
        return f"{text}: {first} is better ({level:.0%} paired interval)"
    return (
        f"{text}: not distinguishable at this budget ({level:.0%} paired interval holds 0); the smallest "
        f"difference this method tells apart here is about {mdad:g} points"
    )


def _check_models(named: Mapping[str, Answers]) -> None:
    if len(named) < 2:
        raise ConfigError("compare needs the answers of at least two models; fix: pass --answers once per model")
    ids = {name: frozenset(given.selection_ids) for name, given in named.items() if given.selection_ids}
    if len(set(ids.values())) > 1:
        n1, s1 = next(iter(ids.items()))
        n2, s2 = next((n, s) for n, s in ids.items() if s != s1)
        raise DataError(
            named[n2].source,
            "selection_id",
            f"{n2!r} answered selection {sorted(s2)[0]}, {n1!r} selection {sorted(s1)[0]}: the models did not "
            "answer one selection, so their answers are not paired",
            "answer the items of one `benchcast select` run with every model you compare",
        )
    seen: dict[frozenset[str], str] = {}
    for name, given in named.items():
        if not given.scores:
            raise DataError(given.source, "(entries)", "no answers", "answer the items `benchcast select` wrote")
        # the same files twice (two checkpoints may well answer a small selection alike: that is allowed)
        key = given.paths or frozenset({f"<in memory {name}>"})
        if key in seen:
            raise DataError(
                given.source,
                "--answers",
                f"the answers of {name!r} are the files of {seen[key]!r} (the same model twice?)",
                "pass each model's own answers once",
            )
        seen[key] = name


def compare(
    dataset: str | Leaderboard,
    method: str,
    answers: Mapping[str, object],
    *,
    budget: int | None = None,
    level: float = 0.9,
    params: dict | None = None,
    data_dir: str | Path = "results",
    seed: int = 0,
    folds: int = DEFAULT_FOLDS,
    log=print,
    cores: int = 1,
    interval: str = "auto",
) -> dict:
    """Each model's estimate (as :func:`benchcast.new_model.estimate` gives it) and every pair's
    difference ``second - first`` (in the order given) with a ``level`` paired interval and a
    verdict. ``answers``: a model's name -> its answers (what ``estimate`` takes). ``interval``:
    ``own`` (the method's own paired interval: Random-Sampling, AIPW), ``conformal``, or ``auto``
    (its own where it has one)."""
    check_method(method, params)
    if interval not in INTERVALS:
        raise ConfigError(f"unknown interval {interval!r}; fix: choose one of {', '.join(INTERVALS)}")
    if interval == "own" and not has_own_paired_interval(method):
        own = ", ".join(name for name in sorted(REGISTRY) if has_own_paired_interval(name))
        raise ConfigError(
            f"{method} has no paired interval of its own (those that have: {own}); fix: use --interval conformal "
            "(or auto)"
        )
    board = dataset if isinstance(dataset, Leaderboard) else load_leaderboard(str(dataset), data_dir)
    named = {str(name): board.answers(given) for name, given in answers.items()}
    _check_models(named)
    first = next(iter(named.values()))
    if budget is None:
        budget = budget_of_selection(board, method, first, data_dir)
    for given in named.values():
        check_count(given, budget)
    board, fit = stored_fit(board, method, budget, params, data_dir, seed, folds, log, cores, need_pairs=True)
    models = {name: estimate_from(board, fit, given, level, "conformal") for name, given in named.items()}
    calibration = paired_calibration(fit.pairs, level)
    unpaired = math.sqrt(2.0) * conformal_halfwidth(fit.calibration, level)  # the two intervals combined
    mdad = detectable_difference(fit.pairs, len(board.matrix.item_ids))
    names = list(named)
    rows, own_used = [], False
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            differing, shared = differing_on_shared(named[a].scores, named[b].scores)
            diff = models[b]["estimate"] - models[a]["estimate"]
            lower, upper, c_lower, c_upper, own = paired_intervals(
                fit, named[a].scores, named[b].scores, diff, calibration, level, interval
            )
            if interval == "own" and not own:
                raise DataError(
                    named[b].source,
                    "(entries)",
                    f"{method} has no paired interval of its own for {a!r} and {b!r}: they did not both answer its "
                    "whole core set, or (AIPW) answered it alike",
                    "answer every item `benchcast select` chose with both models, or use --interval conformal",
                )
            own_used |= own
            rows.append(
                {
                    "first": a,
                    "second": b,
                    "difference": diff,
                    "lower": lower,
                    "upper": upper,
                    "conformal_lower": c_lower,
                    "conformal_upper": c_upper,
                    "items_shared": shared,
                    "items_differing": differing,
                    "unpaired_halfwidth": unpaired,
                    "verdict": verdict(a, b, diff, lower, upper, level, mdad),
                }
            )
    return {
        "dataset": fit.meta["dataset"],
        "method": method,
        "budget": fit.meta["budget"],
        "selection_id": fit.meta["selection_id"],
        "level": float(level),
        "interval": (
            f"{method}'s own paired central-limit interval (the standard error of the two models' answer "
            f"differences on its core set); the split-conformal one beside it as conformal_lower/upper"
            if own_used
            else f"paired split-conformal from {len(fit.pairs)} pairs of held-out models of the leaderboard (pairs of "
            f"one calibration fold, each pair estimated by the method fitted without it), scaled by how much "
            f"the two models' answers differ, its quantile per band of "
            f"{'the true difference' if calibration.by == 'truth' else 'differing answers'} "
            f"({len(calibration.quantiles)} bands)"
        ),
        "detectable_difference_points": mdad,
        "models": models,
        "pairs": rows,
    }
