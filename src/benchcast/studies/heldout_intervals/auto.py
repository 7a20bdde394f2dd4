"""The held-out test of ``--method auto`` (:mod:`benchcast.new_model.auto`): its choice made in each
held-out fold exactly as the command line makes it, and the error of what it chose on the fold's
models, which neither the choice nor the fits saw.

In fold ``f`` of the held-out test (:func:`benchcast.studies.heldout_intervals.heldout.heldout`) every
method's fit on the other folds is what a user's leaderboard holds, and its calibration rows are the
cross-validation ``auto`` compares (each row's ``calibration_mae``). Every method of one dataset and
budget shares the folds and each fold's seed, so the candidate with the lowest ``calibration_mae``
(ties: the earlier candidate) is ``auto``'s choice for that user, and its held-out estimates of the
fold's models are ``auto``'s. The table sets that error beside the best single method's (the lowest
held-out MAE of every method run, chosen *after* seeing the held-out errors: a bar no choice made
beforehand can be sure to reach) and Random-Sampling's, for the default candidates and for every
method run as candidates. How sure the ratio to the best is: a 90% percentile bootstrap over the
held-out models (Efron & Tibshirani 1993, ch. 13), the best single method chosen again in each
resample, so that the interval carries the luck of the best in hindsight as well as auto's.
With each fold's fits' calibration rows (``n=<budget>.calibration.parquet``), the table also says
how many candidates each fold's choice was tied with (within one standard error of its
cross-validation error, :func:`benchcast.new_model.auto.rank`): how sure ``auto`` could be there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from benchcast.new_model.auto import CANDIDATES, cv_errors, rank
from benchcast.seeding import rng

#: bootstrap resamples of the held-out models for the interval of ``auto_over_best``
RESAMPLES = 2000


def auto_rows(frames: dict[str, pd.DataFrame], candidates: Sequence[str]) -> pd.DataFrame:
    """``auto``'s held-out rows over ``candidates`` (names in ``frames``: method -> held-out rows of one
    dataset and budget, with ``fold``, ``estimate``, ``truth``, ``calibration_mae``): per fold, the
    rows of the candidate with the lowest ``calibration_mae``, with a ``method`` column."""
    names = [c for c in candidates if c in frames]
    chosen = []
    for fold in sorted(frames[names[0]].fold.unique()):
        errors = [float(frames[c].loc[frames[c].fold == fold, "calibration_mae"].iloc[0]) for c in names]
        best = names[int(np.argmin(errors))]  # argmin: the first of equal errors, as auto's order
        chosen.append(frames[best][frames[best].fold == fold].assign(method=best))
    return pd.concat(chosen, ignore_index=True)


def fold_ties(calibrations: dict[str, pd.DataFrame], candidates: Sequence[str]) -> dict[int, list[str]]:
    """Per held-out fold, the candidates tied with ``auto``'s choice there, as ``choose_method``
    reports them to that user (``calibrations``: method -> its fits' calibration rows with
    ``heldout_fold``)."""
    names = [c for c in candidates if c in calibrations]
    ties = {}
    for fold in sorted(calibrations[names[0]].heldout_fold.unique()):
        table = rank({n: cv_errors(calibrations[n][calibrations[n].heldout_fold == fold]) for n in names})
        ties[int(fold)] = list(table.method[1:][table.tied[1:]])
    return ties


def _errors(rows: pd.DataFrame) -> pd.Series:
    """Absolute errors by held-out model (``model_id`` where the rows have one, else row order)."""
    errors = (rows.estimate - rows.truth).abs()
    return errors.set_axis(rows.model_id) if "model_id" in rows else errors.reset_index(drop=True)


def _mae(rows: pd.DataFrame) -> float:
    return float(_errors(rows).mean())


def ratio_interval(
    auto: pd.Series, single: dict[str, pd.Series], seed: int, stream: str, level: float = 0.9
) -> tuple[float, float]:
    """The ``level`` percentile-bootstrap interval of auto's MAE over the best single method's, the
    models resampled with replacement and the best chosen again in each resample (module docstring)."""
    errors = pd.DataFrame(single).reindex(auto.index).to_numpy()
    mine = auto.to_numpy()
    draw = rng(seed, 0, stream).integers(0, len(mine), size=(RESAMPLES, len(mine)))
    best = errors[draw].mean(axis=1).min(axis=1)
    ratios = np.divide(mine[draw].mean(axis=1), best, out=np.full(RESAMPLES, np.nan), where=best > 0)
    tail = (1 - level) / 2
    return float(np.nanquantile(ratios, tail)), float(np.nanquantile(ratios, 1 - tail))


def auto_table(
    cells,
    frames: list[pd.DataFrame],
    fit_seconds: dict | None = None,
    seed: int = 0,
    calibrations: list[pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Per dataset and budget and candidate list (``default``: :data:`CANDIDATES` that were run;
    ``every``: every method run): ``auto``'s held-out MAE, the methods it chose (with the number of
    folds each), the best single method and its MAE, Random-Sampling's MAE, and the ratios. With
    ``fit_seconds`` ((dataset, method, budget) -> seconds of a first fit with its calibration), the
    seconds ``auto``'s first call adds: its candidates' first fits but the chosen one's (the largest
    over folds' choices); ``seed``: the bootstrap's (stream ``auto_bootstrap:<dataset>:<budget>:<candidates>``);
    with ``calibrations`` (each cell's fits' calibration rows), ``tied``: each fold's number of
    candidates tied with its choice (:func:`fold_ties`)."""
    by_key: dict[tuple[str, int], dict[str, pd.DataFrame]] = {}
    calibration_of: dict[tuple[str, int], dict[str, pd.DataFrame]] = {}
    for i, ((dataset, method, budget), rows) in enumerate(zip(cells, frames)):
        by_key.setdefault((dataset, int(budget)), {})[method] = rows
        if calibrations is not None:
            calibration_of.setdefault((dataset, int(budget)), {})[method] = calibrations[i]
    out = []
    for (dataset, budget), methods in by_key.items():
        single = {m: _mae(r) for m, r in methods.items()}
        best = min(single, key=lambda m: (single[m], m))
        for label, candidates in (("default", [c for c in CANDIDATES if c in methods]), ("every", list(methods))):
            if not candidates:
                continue
            rows = auto_rows(methods, candidates)
            chose = rows.groupby("method", sort=False).fold.nunique()
            mae = _mae(rows)
            random = single.get("random_sampling", float("nan"))
            lower, upper = ratio_interval(
                _errors(rows),
                {m: _errors(r) for m, r in methods.items()},
                seed,
                f"auto_bootstrap:{dataset}:{budget}:{label}",
            )
            entry = {
                "dataset": dataset,
                "budget": budget,
                "candidates": label,
                "n_candidates": len(candidates),
                "models": len(rows),
                "auto_mae": mae,
                "chosen": "; ".join(f"{m} ({k} folds)" for m, k in chose.items()),
                "best_method": best,
                "best_mae": single[best],
                "auto_over_best": mae / single[best] if single[best] > 0 else float("nan"),
                "auto_over_best_lower": lower,
                "auto_over_best_upper": upper,
                "random_sampling_mae": random,
                "auto_over_random_sampling": mae / random if random > 0 else float("nan"),
            }
            if calibrations is not None:
                ties = fold_ties(calibration_of[(dataset, budget)], candidates)
                entry["tied"] = ", ".join(str(len(t)) for t in ties.values())
            if fit_seconds is not None:
                costs = {c: fit_seconds.get((dataset, c, budget), float("nan")) for c in candidates}
                total = sum(costs.values())
                entry["first_fit_seconds_added"] = max(total - costs[m] for m in chose.index)
            out.append(entry)
    return pd.DataFrame(out)
