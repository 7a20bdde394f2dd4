"""BenchPress Section 5.2 (Table 6, Figure 6): does the predictor preserve the models' ranking?

Pairwise ranking accuracy at score margins, over held-out folds and along probe prefixes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def _pair_counts(
    actual: np.ndarray, predicted: np.ndarray, heldout: np.ndarray, margins: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    comp = base[None, :] & (np.abs(td)[None, :] >= margins[:, None])  # (n_margins, n_pairs)
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
        idx = by_group[bounds[g] : bounds[g + 1]]
        n, c, t = _pair_counts(actual[idx], predicted[idx], heldout[idx], margins)
        for m, nm, cm, tm in zip(margins, n, c, t):
            rows.append(
                {
                    "group": labels[g],
                    "margin": float(m),
                    "n_pairs": int(nm),
                    "n_correct": int(cm),
                    "n_predicted_ties": int(tm),
                    "accuracy": cm / nm if nm else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=["group", "margin", "n_pairs", "n_correct", "n_predicted_ties", "accuracy"])


def _median_by(per: pd.DataFrame, key: str) -> pd.DataFrame:
    """Pool counts per (margin, key), then per margin the median accuracy over keys."""
    pooled = per.groupby(["margin", key], sort=True)[["n_pairs", "n_correct", "n_predicted_ties"]].sum().reset_index()
    pooled = pooled[pooled["n_pairs"] > 0]
    out = []
    for m, g in pooled.groupby("margin", sort=True):
        acc = g["n_correct"] / g["n_pairs"]
        out.append(
            {
                "margin": float(m),
                "accuracy": float(np.median(acc)),
                "n_pairs": int(g["n_pairs"].sum()),
                "n_correct": int(g["n_correct"].sum()),
                "n_predicted_ties": int(g["n_predicted_ties"].sum()),
                "pooled_accuracy": float(g["n_correct"].sum() / g["n_pairs"].sum()),
                f"n_{key}s": int(len(g)),
            }
        )
    return pd.DataFrame(out)


def ranking_preservation(
    M: np.ndarray,
    fold_cells: Sequence[np.ndarray],
    fold_predictions: Sequence[np.ndarray],
    margins: Sequence[float] = (0.0, 1.0, 2.0, 5.0),
) -> tuple[pd.DataFrame, pd.DataFrame]:
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
            A.append(a[ok])
            P.append(c[ok])
            H.append(h[ok])
            G.append(np.full(ok.sum(), f * n_b + j))
    if not A:
        raise ValueError("no fold has a scorable leaderboard")
    per = pairwise_ranking_accuracy(np.concatenate(A), np.concatenate(P), np.concatenate(H), np.concatenate(G), margins)
    per.insert(0, "benchmark", (per["group"] % n_b).astype(np.int64))
    per.insert(0, "fold", (per["group"] // n_b).astype(np.int64))
    per = per.drop(columns="group")
    return per, _median_by(per, "benchmark")
