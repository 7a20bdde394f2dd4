"""BenchPress Section 5: probe-set construction, ranking preservation, temporal deployment.

Three model-evaluation analyses of "You Don't Need to Run Every Eval" (BenchPress,
arXiv 2606.24020), all built on the default score predictor (Logit Bias ALS, rank 2,
lambda 0.1; :data:`benchcast.studies.benchpress.settings.DEFAULT_PREDICTOR`):

One module each (this one re-exports the other two's functions): probe sets here,
:mod:`~benchcast.studies.benchpress.ranking`, :mod:`~benchcast.studies.benchpress.temporal`; the
predictor they refit is :mod:`~benchcast.studies.benchpress.predictor`.

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from benchcast.stats.metrics import completion_errors
from benchcast.studies.benchpress.predictor import PredictBatch, predict_default_batch
from benchcast.studies.benchpress.ranking import pairwise_ranking_accuracy, ranking_preservation
from benchcast.studies.benchpress.temporal import (
    summarize_temporal,
    temporal_deployment,
    temporal_seed,
    temporal_targets,
    temporal_training_rows,
)

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

OBJECTIVES = ("medape", "medae")


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
        key = (
            hashlib.sha1(np.ascontiguousarray(np.nan_to_num(M, nan=-1e300)).tobytes()).digest()
            + hashlib.sha1(np.isnan(M).tobytes()).digest()
        )
        if self._matrix_key is None:
            self._matrix_key = key
        elif self._matrix_key != key:
            raise ValueError("this ProbeCache was filled for a different score matrix")

    def fill(self, M: np.ndarray, keys: Iterable[tuple[int, tuple[int, ...]]], predict_batch: PredictBatch) -> None:
        """Fit every missing key (deduplicated, in first-seen order), ``chunk`` matrices per call."""
        todo = list(dict.fromkeys(k for k in keys if k not in self.rows))
        for start in range(0, len(todo), self.chunk):
            part = todo[start : start + self.chunk]
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


def _assemble(M: np.ndarray, observed: np.ndarray, probes: Sequence[int], cache: ProbeCache, objective) -> ProbeEval:
    is_probe = _probe_mask(M.shape[1], probes)
    rows, cols = np.nonzero(observed)
    actual = M[rows, cols]
    revealed = is_probe[cols]
    P = np.full_like(M, np.nan)
    for i in np.unique(rows[~revealed]):
        P[i] = cache.rows[(int(i), _visible_key(observed[i], probes))]
    predicted = np.where(revealed, actual, P[rows, cols])
    cells = pd.DataFrame(
        {"model": rows, "benchmark": cols, "actual": actual, "predicted": predicted, "revealed": revealed}
    )
    err = completion_errors(actual, predicted)
    score = _objective_value(objective, err["medape"], err["medae"], cells)
    return ProbeEval(
        probes=tuple(int(j) for j in probes),
        medape=err["medape"],
        medae=err["medae"],
        n=err["n"],
        score=score,
        cells=cells,
    )


def evaluate_probe_set(
    M: np.ndarray,
    probes: Sequence[int],
    objective="medape",
    *,
    predict_batch: PredictBatch = predict_default_batch,
    cache: ProbeCache | None = None,
) -> ProbeEval:
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


def evaluate_probe_order(
    M: np.ndarray,
    order: Sequence[int],
    k_max: int | None = None,
    objective="medape",
    *,
    predict_batch: PredictBatch = predict_default_batch,
    cache: ProbeCache | None = None,
) -> list[ProbeEval]:
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


def greedy_probe_sets(
    M: np.ndarray,
    candidates: Sequence[int] | None = None,
    steps: int = 10,
    objective="medape",
    *,
    predict_batch: PredictBatch = predict_default_batch,
    cache: ProbeCache | None = None,
    progress: Callable[[dict], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> GreedyResult:
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
        rec = {
            "step": step,
            "added": best,
            "score": best_eval.score,
            "medape": best_eval.medape,
            "medae": best_eval.medae,
            "n": best_eval.n,
            "seconds": time.perf_counter() - t0,
            "n_fits": cache.n_fits - fits0,
        }
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


def random_probe_baseline(
    M: np.ndarray,
    k_max: int = 10,
    n_seeds: int = 10,
    base_seed: int = 42,
    *,
    predict_batch: PredictBatch = predict_default_batch,
    cache: ProbeCache | None = None,
) -> pd.DataFrame:
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
    cache.fill(
        M,
        [key for o in orders for k in range(1, k_max + 1) for key in _needed_keys(observed, list(o[:k]))],
        predict_batch,
    )
    for s, order in enumerate(orders):
        for k, ev in enumerate(
            evaluate_probe_order(M, list(order), k_max, predict_batch=predict_batch, cache=cache), 1
        ):
            hid = ev.cells[~ev.cells.revealed]
            hidden = completion_errors(hid["actual"].to_numpy(), hid["predicted"].to_numpy())
            rows.append(
                {
                    "seed": s,
                    "k": k,
                    "medape": ev.medape,
                    "medae": ev.medae,
                    "n": ev.n,
                    "hidden_medape": hidden["medape"],
                    "hidden_medae": hidden["medae"],
                    "probes": tuple(int(j) for j in order[:k]),
                }
            )
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
            rec.update(
                {
                    f"{m}_mean": float(np.mean(v)),
                    f"{m}_median": float(np.median(v)),
                    f"{m}_q25": float(np.percentile(v, 25)),
                    f"{m}_q75": float(np.percentile(v, 75)),
                }
            )
        out.append(rec)
    return pd.DataFrame(out)


def probe_ranking_accuracy(ev: ProbeEval, margin: float = 5.0) -> dict:
    """Figure 6 / Table 15 metric: same-benchmark pairwise accuracy of a probe evaluation.

    The paper's code (``ranking_preservation/greedy_probe_set/all_known/run.py``) marks
    *every* observed cell as evaluated (probe cells are exact and stay in the denominator),
    groups by benchmark and takes the median over benchmarks of the per-benchmark accuracy.
    Returns ``accuracy`` (that median), ``n_pairs``, ``n_correct`` and ``pooled_accuracy``.
    """
    c = ev.cells
    per = pairwise_ranking_accuracy(
        c["actual"].to_numpy(),
        c["predicted"].to_numpy(),
        np.ones(len(c), dtype=bool),
        c["benchmark"].to_numpy(),
        margin,
    )
    acc = per["accuracy"].dropna()
    n, k = int(per["n_pairs"].sum()), int(per["n_correct"].sum())
    return {
        "margin": float(margin),
        "accuracy": float(np.median(acc)) if len(acc) else float("nan"),
        "n_pairs": n,
        "n_correct": k,
        "pooled_accuracy": k / n if n else float("nan"),
    }


def ranking_objective(margin: float = 5.0) -> Callable[[pd.DataFrame], float]:
    """Table 15's greedy objective: minus the median-over-benchmarks pairwise ranking accuracy at
    ``margin`` of a probe evaluation's cells (the quantity of :func:`probe_ranking_accuracy`),
    so that :func:`greedy_probe_sets`, which minimizes, picks the most ranking-preserving probe."""

    def objective(cells: pd.DataFrame) -> float:
        per = pairwise_ranking_accuracy(
            cells["actual"].to_numpy(),
            cells["predicted"].to_numpy(),
            np.ones(len(cells), dtype=bool),
            cells["benchmark"].to_numpy(),
            margin,
        )
        acc = per["accuracy"].dropna()
        return -float(np.median(acc)) if len(acc) else float("inf")

    return objective
