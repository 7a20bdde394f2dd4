"""BenchPress Section 5: probe-set construction, ranking preservation, temporal deployment.

Three model-evaluation analyses of "You Don't Need to Run Every Eval" (BenchPress,
arXiv 2606.24020), all built on the default score predictor (Logit Bias ALS, rank 2,
lambda 0.1; :data:`benchcast.completion.pipeline.DEFAULT_PREDICTOR`):

* **Budgeted scorecard recovery (Sec. 5.1, Table 5, Figure 5, Figure 1(b))** --
  :func:`evaluate_probe_set`, :func:`greedy_probe_sets`, :func:`random_probe_baseline`.
* **Ranking preservation (Sec. 5.2, Table 6, Figure 6)** -- :func:`pairwise_ranking_accuracy`,
  :func:`ranking_preservation`, :func:`probe_ranking_accuracy`.
* **Newly released models (Sec. 5.3, Figure 7, Table 16)** -- :func:`temporal_targets`,
  :func:`temporal_training_rows`, :func:`temporal_deployment`.

Where the paper's text is silent, the paper's released code (``microsoft/benchpress``,
``benchpress/evaluation_harness.py`` and ``experiments/sec5_findings/``) was read for the
facts; each such fact is stated in the docstring where it is used ("the paper's code ...").

Predictors
----------
Every function that fits the predictor takes ``predict_batch``: a callable mapping a stack
of training matrices ``(K, M, B)`` (NaN = missing) to completed matrices of the same shape
on the original score scale. The default, :func:`predict_default_batch`, is the paper's
default predictor; tests inject cheap stand-ins.

Speed
-----
The all-known-cell probe protocol refits the predictor once per target model per
candidate probe set. Two things keep this affordable, both exact (they change no number):

* :class:`ProbeCache` memoizes the target row's prediction by *(target, probe columns the
  target actually observed)*. Adding a candidate the target never reported leaves its
  masked matrix -- hence its prediction -- unchanged, so each greedy step refits only the
  (target, candidate) pairs where the target has the candidate's score (about the number
  of observed cells, ~2.6k on the 84 x 133 matrix, instead of 84 x 133 = 11k), and the
  MedAPE / MedAE / cost-aware runs share every fit their probe prefixes have in common.
* all fits a step needs are collected first and sent to ``predict_batch`` in chunks.

The fit itself is the remaining cost: :func:`~benchcast.completion.completers.bias_als_batch`
assembles every ridge system from products of the fixed mask / data matrices (no dense
residual arrays), so a few masked matrices per call are fastest (chunks of 4 measured best).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from benchcast.completion.completers import bias_als_batch
from benchcast.completion.pipeline import DEFAULT_PREDICTOR
from benchcast.completion.transforms import standardize, unstandardize
from benchcast.metrics import completion_errors

__all__ = [
    "PredictBatch",
    "predict_default_batch",
    "ProbeCache",
    "ProbeEval",
    "mask_target_to_probes",
    "ranking_objective",
    "evaluate_probe_set",
    "evaluate_probe_order",
    "GreedyResult",
    "greedy_probe_sets",
    "random_probe_order",
    "random_probe_baseline",
    "summarize_random",
    "pairwise_ranking_accuracy",
    "ranking_preservation",
    "probe_ranking_accuracy",
    "temporal_targets",
    "temporal_training_rows",
    "temporal_seed",
    "temporal_deployment",
    "summarize_temporal",
]

PredictBatch = Callable[[np.ndarray], np.ndarray]
"""``(K, M, B)`` training matrices (NaN = missing) -> ``(K, M, B)`` completed score matrices."""

OBJECTIVES = ("medape", "medae")


# --------------------------------------------------------------------------- predictor


def predict_default_batch(Ms: np.ndarray | Sequence[np.ndarray], chunk_size: int = 4,
                          transform: str | None = None,
                          params: dict | None = None) -> np.ndarray:
    """The default BenchPress predictor on a stack of differently-masked matrices.

    Each matrix is standardized on *its own* observed cells (the percentage-column rule and
    the column means / stds depend on the training matrix, exactly as in
    :func:`~benchcast.completion.pipeline.predict_scores`); the standardized matrices are
    fitted ``chunk_size`` at a time, then each is mapped back to scores.

    The fit is :func:`~benchcast.completion.completers.bias_als_batch` (identical to one
    ``predict_scores(M_k, "logit", "bias_als", {"rank": 2, "lam": 0.1})`` per matrix).
    ``chunk_size`` only trades speed for memory; 4 was the fastest of the sizes timed on the
    84 x 133 matrix.

    Parameters
    ----------
    Ms : (K, M, B) array or sequence of (M, B) arrays, NaN = missing.
    chunk_size : matrices per solver call.
    transform, params : override the default's ``"logit"`` and ``{"rank": 2, "lam": 0.1}``.

    Returns
    -------
    (K, M, B) array: observed cells unchanged, missing cells predicted (NaN where no
    prediction: a column without training observations).
    """
    Ms = np.asarray(Ms, dtype=np.float64)
    if Ms.ndim == 2:
        Ms = Ms[None]
    if Ms.ndim != 3:
        raise ValueError(f"expected a (K, M, B) stack of matrices, got shape {Ms.shape}")
    if DEFAULT_PREDICTOR["method"] != "bias_als":
        raise RuntimeError("predict_default_batch assumes the default predictor is Bias ALS")
    transform = transform or DEFAULT_PREDICTOR["transform"]
    params = dict(DEFAULT_PREDICTOR["params"] if params is None else params)
    chunk_size = max(1, int(chunk_size))
    out = np.empty_like(Ms)
    for start in range(0, len(Ms), chunk_size):
        sts = [standardize(M, transform) for M in Ms[start:start + chunk_size]]
        Z_hat = bias_als_batch(np.stack([st.z for st in sts]), **params)
        for k, st in enumerate(sts):
            out[start + k] = unstandardize(st, Z_hat[k])
    return out


# --------------------------------------------------------------------------- probe protocol


def mask_target_to_probes(M: np.ndarray, target: int, probes: Iterable[int]) -> np.ndarray:
    """Copy of ``M`` in which row ``target`` keeps only the ``probes`` columns.

    The all-known-cell protocol (Sec. 5.1; the paper's code ``mask_model_to_probe_columns``):
    every other model keeps its full observed row.
    """
    keep = np.zeros(M.shape[1], dtype=bool)
    keep[list(probes)] = True
    X = np.array(M, dtype=np.float64, copy=True)
    X[target, ~keep] = np.nan
    return X


@dataclass
class ProbeCache:
    """Memo of target-row predictions under the probe protocol, plus fit counters.

    Key: ``(target, visible)`` where ``visible`` is the sorted tuple of probe columns the
    target has observed -- the masked training matrix is a function of exactly this key, so
    two probe sets with the same key give the same prediction. A cache belongs to one score
    matrix and one predictor; :func:`evaluate_probe_set` checks the matrix.

    ``n_fits`` / ``fit_seconds`` count the predictor fits made through this cache.
    """

    rows: dict = field(default_factory=dict)
    n_fits: int = 0
    fit_seconds: float = 0.0
    chunk: int = 256
    _matrix_key: bytes | None = None

    def bind(self, M: np.ndarray) -> None:
        key = hashlib.sha1(np.ascontiguousarray(np.nan_to_num(M, nan=-1e300)).tobytes()).digest() + \
            hashlib.sha1(np.isnan(M).tobytes()).digest()
        if self._matrix_key is None:
            self._matrix_key = key
        elif self._matrix_key != key:
            raise ValueError("this ProbeCache was filled for a different score matrix")

    def fill(self, M: np.ndarray, keys: Iterable[tuple[int, tuple[int, ...]]], predict_batch: PredictBatch) -> None:
        """Fit every missing key (deduplicated, in first-seen order), ``chunk`` matrices per call."""
        todo = list(dict.fromkeys(k for k in keys if k not in self.rows))
        for start in range(0, len(todo), self.chunk):
            part = todo[start:start + self.chunk]
            Xs = np.stack([mask_target_to_probes(M, i, vis) for i, vis in part])
            t0 = time.perf_counter()
            P = np.asarray(predict_batch(Xs), dtype=np.float64)
            self.fit_seconds += time.perf_counter() - t0
            self.n_fits += len(part)
            if P.shape != Xs.shape:
                raise ValueError(f"predict_batch returned shape {P.shape}, expected {Xs.shape}")
            for (i, vis), Pk in zip(part, P):
                self.rows[(i, vis)] = Pk[i].copy()


@dataclass
class ProbeEval:
    """One probe set evaluated on every observed cell.

    ``cells``: one row per observed (model, benchmark) cell with ``model, benchmark, actual,
    predicted, revealed`` (revealed = a probe cell, predicted = actual). ``score`` is the
    objective (``inf`` when undefined).
    """

    probes: tuple[int, ...]
    medape: float
    medae: float
    n: int
    score: float
    cells: pd.DataFrame


def _probe_mask(n_bench: int, probes: Sequence[int]) -> np.ndarray:
    mask = np.zeros(n_bench, dtype=bool)
    mask[[int(j) for j in probes]] = True
    return mask


def _visible_key(obs_row: np.ndarray, probes: Sequence[int]) -> tuple[int, ...]:
    """Sorted probe columns the row has observed: what its masked row keeps visible."""
    return tuple(np.flatnonzero(obs_row & _probe_mask(len(obs_row), probes)).tolist())


def _needed_keys(observed: np.ndarray, probes: Sequence[int]) -> list[tuple[int, tuple[int, ...]]]:
    """Cache keys of the targets that still have an unrevealed observed cell (the paper's
    code fits no predictor for a target whose observed cells are all probes)."""
    is_probe = _probe_mask(observed.shape[1], probes)
    need = (observed & ~is_probe).any(axis=1)
    vis = observed & is_probe
    return [(int(i), tuple(np.flatnonzero(vis[i]).tolist())) for i in np.flatnonzero(need)]


def _objective_value(objective, medape: float, medae: float, cells: pd.DataFrame) -> float:
    if callable(objective):
        v = float(objective(cells))
    elif objective == "medape":
        v = medape
    elif objective == "medae":
        v = medae
    else:
        raise ValueError(f"objective must be one of {OBJECTIVES} or a callable, got {objective!r}")
    return v if np.isfinite(v) else float("inf")


def _assemble(M: np.ndarray, observed: np.ndarray, probes: Sequence[int], cache: ProbeCache,
              objective) -> ProbeEval:
    is_probe = _probe_mask(M.shape[1], probes)
    rows, cols = np.nonzero(observed)
    actual = M[rows, cols]
    revealed = is_probe[cols]
    P = np.full_like(M, np.nan)
    for i in np.unique(rows[~revealed]):
        P[i] = cache.rows[(int(i), _visible_key(observed[i], probes))]
    predicted = np.where(revealed, actual, P[rows, cols])
    cells = pd.DataFrame({"model": rows, "benchmark": cols, "actual": actual,
                          "predicted": predicted, "revealed": revealed})
    err = completion_errors(actual, predicted)
    score = _objective_value(objective, err["medape"], err["medae"], cells)
    return ProbeEval(probes=tuple(int(j) for j in probes), medape=err["medape"], medae=err["medae"],
                     n=err["n"], score=score, cells=cells)


def evaluate_probe_set(M: np.ndarray, probes: Sequence[int], objective="medape", *,
                       predict_batch: PredictBatch = predict_default_batch,
                       cache: ProbeCache | None = None) -> ProbeEval:
    """Pooled error of a global probe set under the all-known-cell protocol (Sec. 5.1).

    For each target model, only the probe columns stay visible in its row; every other model
    keeps its full observed row (the paper's code ``mask_model_to_probe_columns``). The
    evaluation universe is *every* observed cell of every model, fixed across budgets:
    observed probe cells count as exact predictions (``pred = true``, zero error) and the
    target's other observed cells are read off the completed masked matrix (the paper's code
    ``evaluate_probe_set``). Cells without a finite prediction are dropped from the pooled
    metric, as the paper's ``compute_prediction_error`` does. Probe columns a target did not
    report reveal nothing for it.

    Parameters
    ----------
    M : (M, B) score matrix, NaN = missing.
    probes : benchmark column indices.
    objective : ``"medape"``, ``"medae"`` or ``callable(cells) -> float`` (lower is better);
        sets :attr:`ProbeEval.score`.
    predict_batch : the predictor (default: :func:`predict_default_batch`).
    cache : a :class:`ProbeCache` to reuse fits across calls (same ``M`` and predictor).
    """
    M = np.asarray(M, dtype=np.float64)
    observed = ~np.isnan(M)
    cache = ProbeCache() if cache is None else cache
    cache.bind(M)
    cache.fill(M, _needed_keys(observed, probes), predict_batch)
    return _assemble(M, observed, probes, cache, objective)


def evaluate_probe_order(M: np.ndarray, order: Sequence[int], k_max: int | None = None, objective="medape", *,
                         predict_batch: PredictBatch = predict_default_batch,
                         cache: ProbeCache | None = None) -> list[ProbeEval]:
    """:func:`evaluate_probe_set` on the prefixes ``order[:1], ..., order[:k_max]`` (all fits batched)."""
    M = np.asarray(M, dtype=np.float64)
    observed = ~np.isnan(M)
    cache = ProbeCache() if cache is None else cache
    cache.bind(M)
    k_max = len(order) if k_max is None else int(k_max)
    prefixes = [list(order[:k]) for k in range(1, k_max + 1)]
    cache.fill(M, [key for p in prefixes for key in _needed_keys(observed, p)], predict_batch)
    return [_assemble(M, observed, p, cache, objective) for p in prefixes]


@dataclass
class GreedyResult:
    """Greedy probe-set construction.

    ``order``: selected column indices in selection order. ``steps``: one row per step with
    ``step, added, score, medape, medae, n, seconds, n_fits``. ``candidates``: every candidate
    evaluated at every step (``step, candidate, score, medape, medae``).
    """

    order: list[int]
    steps: pd.DataFrame
    candidates: pd.DataFrame


def greedy_probe_sets(M: np.ndarray, candidates: Sequence[int] | None = None, steps: int = 10,
                      objective="medape", *, predict_batch: PredictBatch = predict_default_batch,
                      cache: ProbeCache | None = None, progress: Callable[[dict], None] | None = None,
                      stop: Callable[[], bool] | None = None) -> GreedyResult:
    """Greedy forward selection of a global probe set (Sec. 5.1, Table 5).

    Starting from no probes, each step tries every remaining candidate, evaluates the
    current probes plus that candidate with :func:`evaluate_probe_set` (all observed cells,
    probe cells exact) and keeps the candidate with the lowest objective. As in the paper's
    code (``experiments/sec5_findings/optimal_probe/all_known/run.py``) candidates are
    scanned in the order given and only a strictly lower score replaces the current best,
    so ties go to the earlier candidate; the cost-aware run passes the allow-list in its
    file order, the cost-unaware run all columns in matrix order.

    Parameters
    ----------
    M : (M, B) score matrix.
    candidates : column indices allowed as probes (default: all columns).
    steps : number of probes to select (fewer if candidates run out).
    objective : ``"medape"``, ``"medae"`` or a callable on the cells table (minimized).
    predict_batch, cache : as in :func:`evaluate_probe_set`; pass one cache to several runs
        on the same matrix to share fits.
    progress : called after each step with that step's record.
    stop : checked before each step; returning True ends the construction early (a time
        budget), leaving a shorter order.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = ~np.isnan(M)
    cache = ProbeCache() if cache is None else cache
    cache.bind(M)
    remaining = list(range(M.shape[1])) if candidates is None else [int(j) for j in candidates]
    if len(set(remaining)) != len(remaining):
        raise ValueError("candidates contain duplicates")
    selected: list[int] = []
    step_rows, cand_rows = [], []
    for step in range(1, steps + 1):
        if not remaining or (stop is not None and stop()):
            break
        t0, fits0 = time.perf_counter(), cache.n_fits
        trial = [selected + [c] for c in remaining]
        cache.fill(M, [key for p in trial for key in _needed_keys(observed, p)], predict_batch)
        best, best_eval = None, None
        for c, p in zip(remaining, trial):
            ev = _assemble(M, observed, p, cache, objective)
            cand_rows.append({"step": step, "candidate": c, "score": ev.score, "medape": ev.medape, "medae": ev.medae})
            if best_eval is None or ev.score < best_eval.score:
                best, best_eval = c, ev
        selected.append(best)
        remaining.remove(best)
        rec = {"step": step, "added": best, "score": best_eval.score, "medape": best_eval.medape,
               "medae": best_eval.medae, "n": best_eval.n, "seconds": time.perf_counter() - t0,
               "n_fits": cache.n_fits - fits0}
        step_rows.append(rec)
        if progress is not None:
            progress(rec)
    return GreedyResult(order=selected, steps=pd.DataFrame(step_rows), candidates=pd.DataFrame(cand_rows))


def random_probe_order(n_bench: int, seed_idx: int, base_seed: int = 42) -> np.ndarray:
    """One seed's global random benchmark ordering for the random baseline.

    The paper's code (``random_global_probe_set``): ``RandomState((base_seed + seed_idx) *
    100000)`` shuffles ``arange(n_bench)``; budget k uses the first k columns (nested prefixes).
    """
    rng = np.random.RandomState((int(base_seed) + int(seed_idx)) * 100000)
    perm = np.arange(n_bench)
    rng.shuffle(perm)
    return perm


def random_probe_baseline(M: np.ndarray, k_max: int = 10, n_seeds: int = 10, base_seed: int = 42, *,
                          predict_batch: PredictBatch = predict_default_batch,
                          cache: ProbeCache | None = None) -> pd.DataFrame:
    """Random-prefix baseline of Sec. 5.1 / Figure 1(b): one row per (seed, k).

    Each seed draws one global ordering (:func:`random_probe_order`) used for every target
    model; budget k reveals the first k columns and is evaluated with the same all-known-cell
    protocol as the greedy sets. Columns: ``seed, k, medape, medae, n, hidden_medape,
    hidden_medae, probes`` (``hidden_*``: unrevealed cells only). The paper plots the mean
    over seeds with the 25-75 percentile band (:func:`summarize_random`).
    """
    M = np.asarray(M, dtype=np.float64)
    cache = ProbeCache() if cache is None else cache
    rows = []
    orders = [random_probe_order(M.shape[1], s, base_seed) for s in range(n_seeds)]
    observed = ~np.isnan(M)
    cache.bind(M)
    cache.fill(M, [key for o in orders for k in range(1, k_max + 1) for key in _needed_keys(observed, list(o[:k]))],
               predict_batch)
    for s, order in enumerate(orders):
        for k, ev in enumerate(evaluate_probe_order(M, list(order), k_max, predict_batch=predict_batch, cache=cache), 1):
            hid = ev.cells[~ev.cells.revealed]
            hidden = completion_errors(hid["actual"].to_numpy(), hid["predicted"].to_numpy())
            rows.append({"seed": s, "k": k, "medape": ev.medape, "medae": ev.medae, "n": ev.n,
                         "hidden_medape": hidden["medape"], "hidden_medae": hidden["medae"],
                         "probes": tuple(int(j) for j in order[:k])})
    return pd.DataFrame(rows)


def summarize_random(baseline: pd.DataFrame) -> pd.DataFrame:
    """Per k: mean, median, 25th and 75th percentile over seeds of (hidden-only) MedAPE and MedAE."""
    out = []
    for k, g in baseline.groupby("k", sort=True):
        rec = {"k": int(k), "n_seeds": len(g)}
        for m in ("medape", "medae", "hidden_medape", "hidden_medae"):
            if m not in g:
                continue
            v = g[m].to_numpy(dtype=float)
            rec.update({f"{m}_mean": float(np.mean(v)), f"{m}_median": float(np.median(v)),
                        f"{m}_q25": float(np.percentile(v, 25)), f"{m}_q75": float(np.percentile(v, 75))})
        out.append(rec)
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- ranking


def _pair_counts(actual: np.ndarray, predicted: np.ndarray, heldout: np.ndarray,
                 margins: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n_pairs, n_correct, n_predicted_ties) per margin for one group (finite cells only)."""
    ok = np.isfinite(actual) & np.isfinite(predicted)
    a, p, h = actual[ok], predicted[ok], heldout[ok]
    zeros = np.zeros(len(margins), dtype=np.int64)
    if len(a) < 2:
        return zeros, zeros.copy(), zeros.copy()
    iu, ju = np.triu_indices(len(a), k=1)
    td = a[iu] - a[ju]
    pd_ = p[iu] - p[ju]
    base = (h[iu] | h[ju]) & (td != 0)
    correct = np.sign(td) == np.sign(pd_)
    tie = pd_ == 0
    comp = base[None, :] & (np.abs(td)[None, :] >= margins[:, None])        # (n_margins, n_pairs)
    return comp.sum(1), (comp & correct[None, :]).sum(1), (comp & tie[None, :]).sum(1)


def pairwise_ranking_accuracy(actual, predicted, heldout, groups, margin=0.0) -> pd.DataFrame:
    """Margin-aware same-group pairwise ordering accuracy (Sec. 5.2, eq. 4).

    Within each group (one benchmark leaderboard, or one fold x benchmark leaderboard) every
    unordered pair of cells is *comparable* when, as in the paper's code
    (``compute_ranking_accuracy``): both actual and predicted are finite, at least one of
    the two cells is held out, the true scores differ, and ``|true difference| >= margin``.
    A comparable pair is correct when the predicted difference has the true difference's
    sign; a predicted tie is therefore wrong (and counted in ``n_predicted_ties``).

    Parameters
    ----------
    actual, predicted, heldout : 1-D arrays of equal length (heldout boolean).
    groups : 1-D labels of the same length.
    margin : one margin or a sequence of margins (score points, >= 0).

    Returns
    -------
    DataFrame with one row per (group, margin): ``group, margin, n_pairs, n_correct,
    n_predicted_ties, accuracy`` (NaN accuracy when a group has no comparable pair). Groups
    appear in first-occurrence order.
    """
    actual = np.asarray(actual, dtype=np.float64)
    predicted = np.asarray(predicted, dtype=np.float64)
    heldout = np.asarray(heldout, dtype=bool)
    groups = np.asarray(groups)
    if not (actual.ndim == predicted.ndim == heldout.ndim == groups.ndim == 1):
        raise ValueError("actual, predicted, heldout and groups must be 1-D")
    if not (len(actual) == len(predicted) == len(heldout) == len(groups)):
        raise ValueError("actual, predicted, heldout and groups must have the same length")
    margins = np.atleast_1d(np.asarray(margin, dtype=np.float64))
    if (margins < 0).any():
        raise ValueError(f"margins must be non-negative, got {margins}")
    labels, first, inverse = np.unique(groups, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    by_group = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[by_group], np.arange(len(labels) + 1))
    rows = []
    for g in order:
        idx = by_group[bounds[g]:bounds[g + 1]]
        n, c, t = _pair_counts(actual[idx], predicted[idx], heldout[idx], margins)
        for m, nm, cm, tm in zip(margins, n, c, t):
            rows.append({"group": labels[g], "margin": float(m), "n_pairs": int(nm), "n_correct": int(cm),
                         "n_predicted_ties": int(tm), "accuracy": cm / nm if nm else float("nan")})
    return pd.DataFrame(rows, columns=["group", "margin", "n_pairs", "n_correct", "n_predicted_ties", "accuracy"])


def _median_by(per: pd.DataFrame, key: str) -> pd.DataFrame:
    """Pool counts per (margin, key), then per margin the median accuracy over keys."""
    pooled = per.groupby(["margin", key], sort=True)[["n_pairs", "n_correct", "n_predicted_ties"]].sum().reset_index()
    pooled = pooled[pooled["n_pairs"] > 0]
    out = []
    for m, g in pooled.groupby("margin", sort=True):
        acc = g["n_correct"] / g["n_pairs"]
        out.append({"margin": float(m), "accuracy": float(np.median(acc)), "n_pairs": int(g["n_pairs"].sum()),
                    "n_correct": int(g["n_correct"].sum()), "n_predicted_ties": int(g["n_predicted_ties"].sum()),
                    "pooled_accuracy": float(g["n_correct"].sum() / g["n_pairs"].sum()),
                    f"n_{key}s": int(len(g))})
    return pd.DataFrame(out)


def ranking_preservation(M: np.ndarray, fold_cells: Sequence[np.ndarray], fold_predictions: Sequence[np.ndarray],
                         margins: Sequence[float] = (0.0, 1.0, 2.0, 5.0)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 6: pairwise ranking accuracy of held-out predictions on the Sec. 4.2 folds.

    As in the paper's code (``experiments/sec5_findings/ranking_preservation/run.py``, which
    reads the default predictor's 10 seeds x 3 folds prediction cache): for each fold and
    benchmark with a held-out cell, the leaderboard is the benchmark's observed models with
    true scores on seen cells and the fold's predictions on its held-out cells; cells with a
    non-finite completed value are dropped, and a leaderboard with fewer than two cells or no
    held-out cell left is skipped. Pairs are scored by :func:`pairwise_ranking_accuracy`
    within each (fold, benchmark) leaderboard. The summary pools each benchmark's counts over
    folds, takes correct / comparable per benchmark, and reports the *median across
    benchmarks* (``accuracy``) and the total comparable pairs (``n_pairs``).

    Parameters
    ----------
    M : (M, B) full score matrix.
    fold_cells : per fold, the (k, 2) held-out (model, benchmark) cells.
    fold_predictions : per fold, the (M, B) prediction of the fold's training matrix.

    Returns
    -------
    ``(per_group, summary)``: ``per_group`` has ``fold, benchmark`` plus the columns of
    :func:`pairwise_ranking_accuracy`; ``summary`` one row per margin.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = ~np.isnan(M)
    A, P, H, G = [], [], [], []
    n_b = M.shape[1]
    for f, (cells, pred) in enumerate(zip(fold_cells, fold_predictions)):
        cells = np.asarray(cells, dtype=np.int64).reshape(-1, 2)
        pred = np.asarray(pred, dtype=np.float64)
        held = np.zeros_like(observed)
        held[cells[:, 0], cells[:, 1]] = True
        completed = np.where(held, pred, M)
        for j in np.unique(cells[:, 1]):
            rows = np.flatnonzero(observed[:, j])
            a, c, h = M[rows, j], completed[rows, j], held[rows, j]
            ok = np.isfinite(a) & np.isfinite(c)
            if ok.sum() < 2 or not h[ok].any():
                continue
            A.append(a[ok]); P.append(c[ok]); H.append(h[ok]); G.append(np.full(ok.sum(), f * n_b + j))
    if not A:
        raise ValueError("no fold has a scorable leaderboard")
    per = pairwise_ranking_accuracy(np.concatenate(A), np.concatenate(P), np.concatenate(H),
                                    np.concatenate(G), margins)
    per.insert(0, "benchmark", (per["group"] % n_b).astype(np.int64))
    per.insert(0, "fold", (per["group"] // n_b).astype(np.int64))
    per = per.drop(columns="group")
    return per, _median_by(per, "benchmark")


def probe_ranking_accuracy(ev: ProbeEval, margin: float = 5.0) -> dict:
    """Figure 6 / Table 15 metric: same-benchmark pairwise accuracy of a probe evaluation.

    The paper's code (``ranking_preservation/greedy_probe_set/all_known/run.py``) marks
    *every* observed cell as evaluated (probe cells are exact and stay in the denominator),
    groups by benchmark and takes the median over benchmarks of the per-benchmark accuracy.
    Returns ``accuracy`` (that median), ``n_pairs``, ``n_correct`` and ``pooled_accuracy``.
    """
    c = ev.cells
    per = pairwise_ranking_accuracy(c["actual"].to_numpy(), c["predicted"].to_numpy(),
                                    np.ones(len(c), dtype=bool), c["benchmark"].to_numpy(), margin)
    acc = per["accuracy"].dropna()
    n, k = int(per["n_pairs"].sum()), int(per["n_correct"].sum())
    return {"margin": float(margin), "accuracy": float(np.median(acc)) if len(acc) else float("nan"),
            "n_pairs": n, "n_correct": k, "pooled_accuracy": k / n if n else float("nan")}


def ranking_objective(margin: float = 5.0) -> Callable[[pd.DataFrame], float]:
    """Table 15's greedy objective: minus the median-over-benchmarks pairwise ranking accuracy at
    ``margin`` of a probe evaluation's cells (the quantity of :func:`probe_ranking_accuracy`),
    so that :func:`greedy_probe_sets`, which minimizes, picks the most ranking-preserving probe."""
    def objective(cells: pd.DataFrame) -> float:
        per = pairwise_ranking_accuracy(cells["actual"].to_numpy(), cells["predicted"].to_numpy(),
                                        np.ones(len(cells), dtype=bool), cells["benchmark"].to_numpy(), margin)
        acc = per["accuracy"].dropna()
        return -float(np.median(acc)) if len(acc) else float("inf")
    return objective


# --------------------------------------------------------------------------- temporal deployment


TEMPORAL_WINDOW = ("2025-01-20", "2025-11-13")
"""Release window of the Sec. 5.3 targets (DeepSeek-R1 through GPT-5.1; the paper's code)."""

TEMPORAL_MIN_OBSERVED = 20
"""Targets need *more than* this many observed scores (the paper's code: ``n_observed > 20``)."""

_PARTIAL_MODES = ("paper", "strict")


def _date_bounds(date: str) -> tuple[str, str]:
    """Earliest and latest ISO day a YYYY, YYYY-MM or YYYY-MM-DD string can mean."""
    s = str(date).strip()
    parts = s.split("-")
    if len(parts) == 3:
        return s, s
    if len(parts) == 2:
        y, m = int(parts[0]), int(parts[1])
        last = (pd.Timestamp(year=y, month=m, day=1) + pd.offsets.MonthEnd(0)).day
        return f"{y:04d}-{m:02d}-01", f"{y:04d}-{m:02d}-{last:02d}"
    if len(parts) == 1 and len(s) == 4:
        return f"{s}-01-01", f"{s}-12-31"
    raise ValueError(f"release date {date!r} is not YYYY, YYYY-MM or YYYY-MM-DD")


def _released_before(date: str | None, cutoff: str, partial: str) -> bool:
    if date is None or (isinstance(date, float) and np.isnan(date)) or date == "":
        return False
    if partial == "paper":
        return str(date) < str(cutoff)
    if partial == "strict":
        return _date_bounds(date)[1] < _date_bounds(cutoff)[0]
    raise ValueError(f"partial must be one of {_PARTIAL_MODES}, got {partial!r}")


def temporal_targets(release_dates: Sequence[str | None], observed_counts: Sequence[int],
                     names: Sequence[str] | None = None, window: tuple[str, str] = TEMPORAL_WINDOW,
                     min_observed: int = TEMPORAL_MIN_OBSERVED) -> list[int]:
    """Row indices of the Sec. 5.3 target models, in (release date, name) order.

    The paper's code (``temporal_deployment/run.py``, ``build_hard_rule_landmarks``) keeps a
    model when ``window[0] <= release_date <= window[1]`` as *strings* and it has more than
    ``min_observed`` observed scores; models without a date are skipped. On the 84 x 133
    matrix this gives the paper's 27 targets.
    """
    out = []
    for i, (d, n) in enumerate(zip(release_dates, observed_counts)):
        if not d:
            continue
        if window[0] <= str(d) <= window[1] and int(n) > int(min_observed):
            out.append(i)
    names = [str(i) for i in range(len(release_dates))] if names is None else list(names)
    return sorted(out, key=lambda i: (str(release_dates[i]), names[i]))


def temporal_training_rows(release_dates: Sequence[str | None], target: int, partial: str = "paper") -> np.ndarray:
    """Rows a target may train on: models released strictly before the target's release date.

    ``partial="paper"`` compares the date strings as the paper's code does (``release_date <
    cutoff`` on ISO strings). For full dates that is "released strictly earlier"; a partial
    date sorts before every full date that extends it (``"2025" < "2025-01-20"``), so a
    year- or month-precision model counts as released at the very start of its period.
    ``partial="strict"`` keeps a model only if the *last* day its date can mean is before the
    *first* day the target's can mean, so no model that may have been released on or after
    the target enters training. The target itself is never included.
    """
    cutoff = release_dates[target]
    if not cutoff:
        raise ValueError(f"target row {target} has no release date")
    rows = [i for i, d in enumerate(release_dates) if i != target and _released_before(d, cutoff, partial)]
    return np.asarray(rows, dtype=np.int64)


def temporal_seed(model_id: str, seed_idx: int, base_seed: int = 42) -> int:
    """RandomState seed of one (target, seed) draw of revealed cells.

    The paper's code: ``int(sha1(f"{base_seed}:{family_key}:{seed}")[:8], 16)`` with
    ``family_key = safe_token("model_" + model_id)`` (characters other than letters, digits,
    ``-`` and ``_`` become ``_``). The seed does not depend on k, so the revealed sets for
    k = 1, 5, 10 are nested prefixes of one shuffle of the target's observed columns.
    """
    key = "".join(c if c.isalnum() or c in "-_" else "_" for c in f"model_{model_id}")
    return int(hashlib.sha1(f"{base_seed}:{key}:{int(seed_idx)}".encode("utf-8")).hexdigest()[:8], 16)


def temporal_deployment(M: np.ndarray, release_dates: Sequence[str | None], ks: Sequence[int] = (1, 5, 10),
                        n_seeds: int = 10, *, model_ids: Sequence[str] | None = None,
                        targets: Sequence[int] | None = None, base_seed: int = 42, partial: str = "paper",
                        predict_batch: PredictBatch = predict_default_batch, chunk: int = 128,
                        return_cells: bool = False):
    """Sec. 5.3 / Figure 7 / Table 16: predict a new model from older models plus k seed scores.

    For each target model, the training matrix holds the full observed rows of the models
    released before it (:func:`temporal_training_rows`) and k of the target's observed
    scores, drawn per seed with :func:`temporal_seed` (shuffle the target's observed columns
    in matrix order, take the first k); every other row is empty (kept, so the predictor's
    random starts match the paper's full-matrix run). The predictor completes it, and the
    pooled metric covers all the target's observed cells: revealed cells are exact (zero
    error), hidden cells with a finite prediction enter MedAPE / MedAE, and hidden cells
    without one (benchmarks no training model reported) are dropped (the paper's code,
    ``run_shard``). A target with fewer than k observed scores is skipped for that k.

    Parameters
    ----------
    M : (M, B) score matrix.
    release_dates : per row, ``YYYY[-MM[-DD]]`` string or None.
    ks, n_seeds : seed-set sizes and seeds per size.
    model_ids : row ids (needed for the paper's seeds; default ``str(row)``).
    targets : rows to evaluate (default :func:`temporal_targets`).
    partial : partial-date rule, see :func:`temporal_training_rows`.
    predict_batch : the predictor; all (target, k, seed) matrices are fitted ``chunk`` at a time.
    return_cells : also return the cell-level table.

    Returns
    -------
    One row per (target, k, seed): ``target, model_id, release_date, k, seed, n_train,
    n_observed, n_revealed, n_hidden, n_not_predictable, n, medape, medae, hidden_medape,
    hidden_medae, revealed`` (``n`` = metric cells; ``hidden_*`` pooled over hidden cells
    only). With ``return_cells``, ``(per_seed, cells)`` where ``cells`` has one row per
    (target, k, seed, benchmark): ``actual, predicted, revealed``.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = ~np.isnan(M)
    n_models = M.shape[0]
    model_ids = [str(i) for i in range(n_models)] if model_ids is None else [str(m) for m in model_ids]
    if targets is None:
        targets = temporal_targets(release_dates, observed.sum(1), names=model_ids)
    units, mats = [], []
    for t in targets:
        train = temporal_training_rows(release_dates, t, partial)
        obs_j = np.flatnonzero(observed[t])
        for s in range(n_seeds):
            perm = obs_j.copy()
            np.random.RandomState(temporal_seed(model_ids[t], s, base_seed)).shuffle(perm)
            for k in ks:
                if len(obs_j) < int(k):
                    continue
                revealed = np.sort(perm[:int(k)])
                X = np.full_like(M, np.nan)
                X[train] = M[train]
                X[t, revealed] = M[t, revealed]
                units.append((int(t), int(k), s, len(train), obs_j, revealed))
                mats.append(X)
    rows, cell_parts = [], []
    for start in range(0, len(mats), chunk):
        P = np.asarray(predict_batch(np.stack(mats[start:start + chunk])), dtype=np.float64)
        for (t, k, s, n_train, obs_j, revealed), Pk in zip(units[start:start + chunk], P):
            is_rev = np.isin(obs_j, revealed)
            actual = M[t, obs_j]
            pred = np.where(is_rev, actual, Pk[t, obs_j])
            err = completion_errors(actual, pred)
            hid = completion_errors(actual[~is_rev], pred[~is_rev])
            rows.append({"target": t, "model_id": model_ids[t], "release_date": release_dates[t], "k": k,
                         "seed": s, "n_train": n_train, "n_observed": len(obs_j), "n_revealed": int(is_rev.sum()),
                         "n_hidden": int((~is_rev).sum()),
                         "n_not_predictable": int((~is_rev & ~np.isfinite(pred)).sum()),
                         "n": err["n"], "medape": err["medape"], "medae": err["medae"],
                         "hidden_medape": hid["medape"], "hidden_medae": hid["medae"],
                         "revealed": tuple(int(j) for j in revealed)})
            if return_cells:
                cell_parts.append(pd.DataFrame({"target": t, "k": k, "seed": s, "benchmark": obs_j,
                                                "actual": actual, "predicted": pred, "revealed": is_rev}))
    per_seed = pd.DataFrame(rows)
    if return_cells:
        return per_seed, pd.concat(cell_parts, ignore_index=True)
    return per_seed


def summarize_temporal(per_seed: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 16 and the Figure 7 medians.

    Per (target, k): the median over seeds of the per-seed pooled MedAPE / MedAE (the
    paper's ``merge_results`` / ``gen_table.py``). Per k: the median of those over targets.
    Returns ``(per_target, per_k)``.
    """
    per_target = (per_seed.groupby(["target", "model_id", "release_date", "k"], sort=False)
                  .agg(n_observed=("n_observed", "first"), n_train=("n_train", "first"), n_seeds=("seed", "size"),
                       medape=("medape", "median"), medae=("medae", "median"))
                  .reset_index())
    per_k = (per_target.groupby("k", sort=True)
             .agg(n_targets=("target", "size"), medape=("medape", "median"), medae=("medae", "median"))
             .reset_index())
    return per_target, per_k
