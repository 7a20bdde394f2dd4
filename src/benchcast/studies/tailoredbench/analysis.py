"""TailoredBench's metrics and tables (Section 4.1, Appendix B): Kendall's tau and MAE per run, their
means over the runs, the one-sided Z-test, the pairwise ranking accuracy, and the comparison with
the paper's numbers.

Per run (one trial of a job): Kendall's tau-b between the estimates and the true accuracies of the
target models (:func:`benchcast.stats.metrics.kendall_tau`; NaN, e.g. constant estimates, counts as 0,
as in the released code) and the mean absolute error of accuracy on a 0-1 scale. The
pairwise ranking accuracy is the share of target pairs with different true accuracies that the
estimates order the same way (a tie in the estimates counts one half).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from benchcast.output.comparison import finish, trial_factor
from benchcast.output.tables import within_tolerance
from benchcast.stats.metrics import kendall_tau

METRICS = ("tau", "mae")
#: the paper's runs per setting (Section 4.1)
PAPER_RUNS = 100


def pairwise_accuracy(estimate: np.ndarray, truth: np.ndarray) -> float:
    i, j = np.triu_indices(len(truth), 1)
    differ = truth[i] != truth[j]
    agree = np.sign(estimate[i] - estimate[j]) * np.sign(truth[i] - truth[j])
    return float(((agree[differ] > 0) + 0.5 * (agree[differ] == 0)).mean())


def run_metrics(estimates: pd.DataFrame) -> pd.DataFrame:
    """``trial, tau, mae, pairwise`` from a run job's ``trial, model_id, estimate, truth`` rows."""
    rows = []
    for trial, g in estimates.groupby("trial", sort=True):
        est, truth = g["estimate"].to_numpy(), g["truth"].to_numpy()
        rows.append(
            (int(trial), kendall_tau(est, truth), float(np.abs(est - truth).mean()), pairwise_accuracy(est, truth))
        )
    return pd.DataFrame(rows, columns=["trial", "tau", "mae", "pairwise"])


def summarize(per_run: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error over runs per ``setting, budget`` (from ``setting, budget, trial, ...``)."""
    g = per_run.groupby(["setting", "budget"], sort=True)
    out = g[["tau", "mae", "pairwise"]].mean()
    se = g[["tau", "mae"]].std(ddof=1) / np.sqrt(g.size().to_numpy())[:, None]
    out["tau_se"], out["mae_se"], out["runs"] = se["tau"], se["mae"], g.size()
    return out.reset_index()


def table6(summary: pd.DataFrame, methods: Mapping[str, str]) -> pd.DataFrame:
    """``method, budget, tau, mae, tau_se, mae_se, runs``: one row per method (registry name) and
    inference count; ``methods`` maps each method to the setting that runs it."""
    by_setting = summary.set_index("setting")
    frames = [
        by_setting.loc[[setting]].reset_index(drop=True).assign(method=method)
        for method, setting in methods.items()
        if setting in by_setting.index
    ]
    cols = ["method", "budget", "tau", "mae", "tau_se", "mae_se", "runs"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def ablation(summary: pd.DataFrame, rows: Mapping[str, str], budget: int) -> pd.DataFrame:
    """``row, setting, budget, tau, mae, tau_se, mae_se, runs`` of an ablation table at one inference count."""
    cols = ["tau", "mae", "tau_se", "mae_se", "runs"]
    at = summary[summary.budget == budget].set_index("setting")
    out = [
        dict(row=row, setting=setting, budget=int(budget), **at.loc[setting, cols].to_dict())
        for row, setting in rows.items()
        if setting in at.index
    ]
    return pd.DataFrame(out, columns=["row", "setting", "budget", *cols])


def z_test(ours: np.ndarray, other: np.ndarray, larger_is_better: bool) -> tuple[float, float]:
    """One-sided two-sample Z-test over runs that ``ours`` is better than ``other`` (Section 4.2):
    ``(z, p)``, with ``z`` positive when ``ours`` is better."""
    diff = np.mean(ours) - np.mean(other)
    se = np.sqrt(np.var(ours, ddof=1) / len(ours) + np.var(other, ddof=1) / len(other))
    z = (diff if larger_is_better else -diff) / se if se > 0 else 0.0
    return float(z), float(stats.norm.sf(z))


def z_tests(per_run: pd.DataFrame, ours: str, others: Mapping[str, str]) -> pd.DataFrame:
    """``method, budget, metric, z, p`` of ``ours`` (a setting) against each other method's setting."""
    rows = []
    for method, setting in others.items():
        for budget in sorted(set(per_run.budget)):
            a = per_run[(per_run.setting == ours) & (per_run.budget == budget)]
            b = per_run[(per_run.setting == setting) & (per_run.budget == budget)]
            if a.empty or b.empty:
                continue
            for metric in METRICS:
                z, p = z_test(a[metric].to_numpy(), b[metric].to_numpy(), larger_is_better=metric == "tau")
                rows.append((method, int(budget), metric, z, p))
    return pd.DataFrame(rows, columns=["method", "budget", "metric", "z", "p"])


def paper_vs_ours(
    tables: Mapping[str, pd.DataFrame], paper: pd.DataFrame, tolerance: Mapping[str, Mapping[str, float]]
) -> pd.DataFrame:
    """``table, row, column, ours, paper, runs, tolerance, diff, within_tolerance, tolerance_factor,
    not_comparable`` for every paper cell (``column`` = ``<metric>@<budget>``); ``tables`` maps a
    table name to ours in the :func:`table6` / :func:`ablation` layout (row label in ``method`` or
    ``row``); ``tolerance[table]`` (or ``tolerance["default"]``) gives the largest ``|ours - paper|``
    per metric, widened when a cell has fewer runs than the paper's :data:`PAPER_RUNS`
    (:func:`benchcast.output.comparison.trial_factor`)."""
    rows = []
    for cell in paper.itertuples(index=False):
        ours, runs = np.nan, np.nan
        table = tables.get(cell.table)
        if table is not None:
            label = "method" if "method" in table else "row"
            hit = table[(table[label] == cell.row) & (table["budget"] == cell.budget)]
            if len(hit):
                ours, runs = float(hit[cell.metric].iloc[0]), float(hit["runs"].iloc[0])
        tol = tolerance.get(cell.table, tolerance["default"])[cell.metric]
        rows.append((cell.table, cell.row, f"{cell.metric}@{cell.budget}", ours, float(cell.value), runs, tol))
    out = pd.DataFrame(rows, columns=["table", "row", "column", "ours", "paper", "runs", "tolerance"])
    factor = trial_factor(PAPER_RUNS, out["runs"].fillna(PAPER_RUNS).to_numpy())
    out["tolerance"] = out["tolerance"] * factor
    out["diff"] = out.ours - out.paper
    out["within_tolerance"] = within_tolerance(out.ours, out.paper, out.tolerance, 0.0)
    return finish(out, factor)


def acceptance_summary(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per table this run compares: cells (with ours), cells within tolerance, their share."""
    ran = comparison[comparison["ours"].notna()]
    g = ran.groupby("table", sort=False)["within_tolerance"]
    out = pd.DataFrame({"cells": g.size(), "within": g.sum().astype(int)})
    out["share"] = out.within / out.cells
    return out.reset_index()
