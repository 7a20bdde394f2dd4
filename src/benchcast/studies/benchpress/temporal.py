"""BenchPress Section 5.3 (Figure 7, Table 16): newly released models predicted from older ones.

Each target released in the window is predicted from the models released before it plus k of
its own scores revealed at random (per-target seeds as the paper's code).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from benchcast.stats.metrics import completion_errors
from benchcast.studies.benchpress.predictor import PredictBatch, predict_default_batch

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


def temporal_targets(
    release_dates: Sequence[str | None],
    observed_counts: Sequence[int],
    names: Sequence[str] | None = None,
    window: tuple[str, str] = TEMPORAL_WINDOW,
    min_observed: int = TEMPORAL_MIN_OBSERVED,
) -> list[int]:
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
    return int(hashlib.sha1(f"{base_seed}:{key}:{int(seed_idx)}".encode()).hexdigest()[:8], 16)


def temporal_deployment(
    M: np.ndarray,
    release_dates: Sequence[str | None],
    ks: Sequence[int] = (1, 5, 10),
    n_seeds: int = 10,
    *,
    model_ids: Sequence[str] | None = None,
    targets: Sequence[int] | None = None,
    base_seed: int = 42,
    partial: str = "paper",
    predict_batch: PredictBatch = predict_default_batch,
    chunk: int = 128,
    return_cells: bool = False,
):
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
                revealed = np.sort(perm[: int(k)])
                X = np.full_like(M, np.nan)
                X[train] = M[train]
                X[t, revealed] = M[t, revealed]
                units.append((int(t), int(k), s, len(train), obs_j, revealed))
                mats.append(X)
    rows, cell_parts = [], []
    for start in range(0, len(mats), chunk):
        P = np.asarray(predict_batch(np.stack(mats[start : start + chunk])), dtype=np.float64)
        for (t, k, s, n_train, obs_j, revealed), Pk in zip(units[start : start + chunk], P):
            is_rev = np.isin(obs_j, revealed)
            actual = M[t, obs_j]
            pred = np.where(is_rev, actual, Pk[t, obs_j])
            err = completion_errors(actual, pred)
            hid = completion_errors(actual[~is_rev], pred[~is_rev])
            rows.append(
                {
                    "target": t,
                    "model_id": model_ids[t],
                    "release_date": release_dates[t],
                    "k": k,
                    "seed": s,
                    "n_train": n_train,
                    "n_observed": len(obs_j),
                    "n_revealed": int(is_rev.sum()),
                    "n_hidden": int((~is_rev).sum()),
                    "n_not_predictable": int((~is_rev & ~np.isfinite(pred)).sum()),
                    "n": err["n"],
                    "medape": err["medape"],
                    "medae": err["medae"],
                    "hidden_medape": hid["medape"],
                    "hidden_medae": hid["medae"],
                    "revealed": tuple(int(j) for j in revealed),
                }
            )
            if return_cells:
                cell_parts.append(
                    pd.DataFrame(
                        {
                            "target": t,
                            "k": k,
                            "seed": s,
                            "benchmark": obs_j,
                            "actual": actual,
                            "predicted": pred,
                            "revealed": is_rev,
                        }
                    )
                )
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
    per_target = (
        per_seed.groupby(["target", "model_id", "release_date", "k"], sort=False)
        .agg(
            n_observed=("n_observed", "first"),
            n_train=("n_train", "first"),
            n_seeds=("seed", "size"),
            medape=("medape", "median"),
            medae=("medae", "median"),
        )
        .reset_index()
    )
    per_k = (
        per_target.groupby("k", sort=True)
        .agg(n_targets=("target", "size"), medape=("medape", "median"), medae=("medae", "median"))
        .reset_index()
    )
    return per_target, per_k
