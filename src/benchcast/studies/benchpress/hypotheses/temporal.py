"""Model H9 of the Section 6.1 tests: training-anchor recency (oldest vs middle third of models)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from benchcast.studies.benchpress.hypotheses.stats import PredictBatch, _errors, _predict_at, wilcoxon_test


def _condition_offset(name: str) -> int:
    """The paper's code H9: ``int(md5(name).hexdigest()[:8], 16) % 10000`` (``short_text_hash``)."""
    return int(hashlib.md5(name.encode("utf-8")).hexdigest()[:8], 16) % 10_000


def temporal_groups(release_dates: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Oldest, middle and newest thirds of the models by release date (model H9).

    The paper's code (``H9_temporal/analyze.py``): models with a release date, sorted by the
    date *string* (a stable sort, so ties keep matrix order; a year-only date such as
    ``"2025"`` sorts before every ``"2025-.."``); cuts at ``N // 3`` and ``2 N // 3``.
    Pass the dates as the ISO strings of the source for the paper's order.
    """
    dated = [(str(d), i) for i, d in enumerate(release_dates) if d is not None and not pd.isna(d) and str(d)]
    order = [i for _, i in sorted(dated, key=lambda t: t[0])]
    n = len(order)
    c1, c2 = n // 3, 2 * n // 3
    return np.array(order[:c1]), np.array(order[c1:c2]), np.array(order[c2:])


def temporal_anchor(
    M: np.ndarray,
    release_dates: Sequence,
    predict_batch: PredictBatch,
    *,
    ks: Sequence[int] = (3,),
    k_schedule: Sequence[int] = (1, 3, 5, 8, 10, 15),
    n_seeds: int = 10,
    conditions: Sequence[str] = ("A_oldest", "B_middle"),
) -> pd.DataFrame:
    """Model H9 training-anchor recency: train on the oldest or the middle third, predict the newest.

    The paper's code (``H9_temporal/analyze.py``), per condition (training group A = oldest
    third, B = middle third; targets C = newest third, :func:`temporal_groups`) and seed
    ``s`` in 0..9: ``rng = RandomState(500 s + offset(condition))`` (:func:`_condition_offset`;
    the two conditions draw different reveals); for each ``k`` of ``[1, 3, 5, 8, 10, 15]``
    in order, a training matrix with only the training group's rows, and for each target
    (in date order) with at least ``k + 2`` observed scores a shuffled copy of its observed
    benchmarks whose first ``k`` are revealed; the rest are test cells. One fit per
    (condition, seed, k) predicts all targets; the record is the pooled MedAPE / MedAE over
    all the targets' test cells (skipped with fewer than 3). The table reports k = 3
    (Section 6.1). ``k_schedule`` fixes the random stream; ``ks`` are the budgets fitted.

    Returns one record per (condition, seed, k): ``medape, medae, n``.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = np.isfinite(M)
    A, B, C = temporal_groups(release_dates)
    train_rows = {conditions[0]: A, conditions[1]: B}
    units = []
    for cond in conditions:
        off = _condition_offset(cond)
        for s in range(n_seeds):
            rng = np.random.RandomState(s * 500 + off)
            for k in k_schedule:
                X = np.full_like(M, np.nan)
                X[train_rows[cond]] = M[train_rows[cond]]
                rows, cols = [], []
                for i in C:
                    obs_j = np.flatnonzero(observed[i])
                    if len(obs_j) < k + 2:
                        continue
                    shuf = obs_j.copy()
                    rng.shuffle(shuf)
                    X[i, shuf[:k]] = M[i, shuf[:k]]
                    rows.append(np.full(len(shuf) - k, i))
                    cols.append(shuf[k:])
                if k not in ks or not rows:
                    continue
                r, c = np.concatenate(rows), np.concatenate(cols)
                if len(r) < 3:
                    continue
                units.append((cond, s, k, X, r, c))
    preds = _predict_at(((X, r, c) for *_, X, r, c in units), predict_batch)
    recs = []
    for (cond, s, k, _, r, c), p in zip(units, preds):
        recs.append({"condition": cond, "seed": s, "k": k, **_errors(M[r, c], p)})
    return pd.DataFrame(recs)


def _temporal_test(records: pd.DataFrame, k: int, metric: str, conditions=("A_oldest", "B_middle")) -> dict:
    """The paper's code ``paired_wilcoxon(va, vb)``: diffs ``A - B`` over seeds (finite values,
    truncated to the shorter list), two-sided; all-zero -> p = 1."""
    sel = records[records["k"] == k]
    va = sel[sel["condition"] == conditions[0]].sort_values("seed")[metric].to_numpy()
    vb = sel[sel["condition"] == conditions[1]].sort_values("seed")[metric].to_numpy()
    va, vb = va[np.isfinite(va)], vb[np.isfinite(vb)]
    n = min(len(va), len(vb))
    res = wilcoxon_test(va[:n] - vb[:n], min_n=3)
    res["median_A"] = float(np.median(va[:n])) if n else np.nan
    res["median_B"] = float(np.median(vb[:n])) if n else np.nan
    return res
