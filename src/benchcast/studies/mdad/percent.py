"""Micro-benchmarks of a fixed *percentage* of the seen half (Appendix G, Figures 10 and 17).

Two scopes, as the released code runs them:

- ``benchmark`` (Figure 17, ``process-results-combine-subtasks-same-percent.py``): one
  micro-benchmark of ``max(2, floor(f * n_seen))`` items from the whole seen half;
- ``subtask`` (Figure 10, ``process-results-separate-subtasks.py``): every subtask is its own
  benchmark -- its own halves and a micro-benchmark of ``max(2, floor(f * n_seen_subtask))`` of its
  seen items -- with the trial's source and target models shared by all subtasks. The pair outcomes
  of all subtasks are pooled into one MDAD per fraction (the code hands them to one MDAD call);
  error and tau are per subtask, averaged over subtasks within a trial ("averaged over all
  subtasks", the caption).

The sizes use exact arithmetic: ``floor(0.29 * 100)`` is 29, not the float's 28.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from benchcast import seeding
from benchcast.stats.mdad import Criterion, pair_bootstrap_interval, trial_bootstrap_interval
from benchcast.stats.metrics import kendall_tau
from benchcast.studies.mdad.analysis import cell_counts
from benchcast.studies.mdad.protocol import SPLITS, run_cell

SCOPES = ("benchmark", "subtask")
COLUMNS = [
    "scope", "dataset", "method", "n_source", "split", "fraction", "k", "mdad", "mdad_lower", "mdad_upper",
    "trial_lower", "trial_upper", "error", "error_se", "tau", "tau_se", "trials",
]  # fmt: skip


def fraction_sizes(n_seen: int, fractions: Sequence[float]) -> dict[float, int]:
    """``max(2, floor(f * n_seen))`` per fraction (the released code's size rule)."""
    return {float(f): max(2, int(Fraction(str(f)) * n_seen)) for f in fractions}


def _with_fractions(estimates: pd.DataFrame, sizes: Mapping[float, int]) -> pd.DataFrame:
    """One copy of each size's rows per fraction that maps to it (small pools map several)."""
    mapping = pd.DataFrame({"fraction": list(sizes), "k": np.asarray(list(sizes.values()), dtype=np.int32)})
    return mapping.merge(estimates, on="k", how="inner")


def run_percent_cell(
    scores: np.ndarray,
    subtasks: np.ndarray,
    method: str,
    params: dict | None,
    n_source: int,
    fractions: Sequence[float],
    trials: int,
    base_seed: int,
    scope: str,
    n_targets: int = 50,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`~benchcast.studies.mdad.protocol.run_cell` at the fractions' sizes; rows gain
    ``fraction`` (and ``subtask`` in the ``subtask`` scope). Returns ``(estimates, timing)``."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, got {scope!r}")
    subtasks = np.asarray(subtasks)
    names = list(dict.fromkeys(subtasks.tolist()))
    if scope == "benchmark":
        n_seen = sum(int(np.sum(subtasks == s)) // 2 for s in names)
        sizes = fraction_sizes(n_seen, fractions)
        est, timing = run_cell(
            scores, subtasks, method, params, n_source, sorted(set(sizes.values())), trials, base_seed, n_targets
        )
        return _with_fractions(est, sizes), timing
    frames, timings = [], []
    for name in names:
        columns = subtasks == name
        sizes = fraction_sizes(int(columns.sum()) // 2, fractions)
        est, timing = run_cell(
            scores[:, columns],
            subtasks[columns],
            method,
            params,
            n_source,
            sorted(set(sizes.values())),
            trials,
            base_seed,
            n_targets,
            halves_stream=f":subtask:{name}",
        )
        frames.append(_with_fractions(est, sizes).assign(subtask=str(name)))
        timings.append(timing.assign(subtask=str(name)))
    return pd.concat(frames, ignore_index=True), pd.concat(timings, ignore_index=True)


def _errors(estimates: pd.DataFrame, split: str) -> pd.Series:
    """Per trial: mean absolute error (points) and Kendall's tau against ``split``, averaged over the
    subtasks (one unit in the ``benchmark`` scope)."""
    units = ["trial", "subtask"] if "subtask" in estimates else ["trial"]
    rows = []
    for key, g in estimates.groupby(units, sort=True):
        truth = g[f"{split}_correct"].to_numpy() / g[f"n_{split}"].to_numpy()
        est = g["estimate"].to_numpy()
        rows.append((key[0], 100 * float(np.mean(np.abs(est - truth))), kendall_tau(est, truth)))
    return pd.DataFrame(rows, columns=["trial", "error", "tau"]).groupby("trial").mean()


def summarize_percent(
    estimates: pd.DataFrame, scope: str, dataset: str, method: str, n_source: int, settings: Mapping, base_seed: int
) -> list[dict]:
    """Rows of ``percent.csv`` (:data:`COLUMNS`) for one run file: per fraction and split, MDAD with
    the pair- and trial-bootstrap intervals (subtasks pooled), error and tau with standard errors;
    ``k`` is the mean micro-benchmark size (subtask scope: over the subtasks)."""
    criterion = Criterion.from_settings(settings)
    boot = {"n_boot": settings["n_boot"], "level": settings["level"]}
    rows = []
    for fraction, at in estimates.groupby("fraction", sort=True):
        k = float(at.groupby("subtask").k.first().mean()) if "subtask" in at else float(at.k.iloc[0])
        for split in SPLITS:
            counts = cell_counts(at, split, criterion.binning)
            stream = f"mdad:percent:{scope}:{dataset}:{method}:{n_source}:{split}:{fraction}"
            pairs = pair_bootstrap_interval(counts, seeding.rng(base_seed, 0, stream), criterion, **boot)
            by_trial = trial_bootstrap_interval(counts, seeding.rng(base_seed, 1, stream), criterion, **boot)
            errors = _errors(at, split)
            se = np.sqrt(len(errors)) if len(errors) > 1 else np.nan
            rows.append(
                {
                    "scope": scope,
                    "dataset": dataset,
                    "method": method,
                    "n_source": int(n_source),
                    "split": split,
                    "fraction": float(fraction),
                    "k": k,
                    "mdad": pairs.mdad,
                    "mdad_lower": pairs.lower,
                    "mdad_upper": pairs.upper,
                    "trial_lower": by_trial.lower,
                    "trial_upper": by_trial.upper,
                    "error": errors["error"].mean(),
                    "error_se": errors["error"].std(ddof=1) / se,
                    "tau": errors["tau"].mean(),
                    "tau_se": errors["tau"].std(ddof=1) / se,
                    "trials": int(at["trial"].nunique()),
                }
            )
    return rows
