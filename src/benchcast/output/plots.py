"""Matplotlib figures (Agg backend, fixed metadata so PNGs are reproducible)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from benchcast.data.io import write_figure_atomic

_META = {"Software": None}  # no version string in the file


def _save(fig, path: str | Path) -> None:
    write_figure_atomic(fig, path, dpi=110, bbox_inches="tight", metadata=_META)
    plt.close(fig)


def annotated_heatmap(
    values: pd.DataFrame,
    labels: pd.DataFrame,
    path: str | Path,
    title: str,
    colour_label: str,
    cmap: str = "viridis",
    center: float | None = None,
) -> None:
    """Rows x columns heatmap with one text label per cell (the paper's Figures 2-4, 6-11 style)."""
    v = values.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(1.25 * v.shape[1] + 3, 0.42 * v.shape[0] + 2))
    if center is not None:
        lim = np.nanmax(np.abs(v - center)) or 1.0
        im = ax.imshow(v, cmap=cmap, aspect="auto", vmin=center - lim, vmax=center + lim)
    else:
        im = ax.imshow(v, cmap=cmap, aspect="auto")
    ax.set_xticks(range(v.shape[1]), labels.columns, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(v.shape[0]), labels.index, fontsize=8)
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            ax.text(
                j,
                i,
                str(labels.iat[i, j]).replace(" (", "\n("),
                ha="center",
                va="center",
                fontsize=6.5,
                color="white" if np.isfinite(v[i, j]) and v[i, j] < np.nanmean(v) else "black",
            )
    fig.colorbar(im, ax=ax, label=colour_label)
    ax.set_title(title, fontsize=10)
    _save(fig, path)


def binned_bars(series: dict[str, pd.DataFrame], path: str | Path, title: str) -> None:
    """Figure 5: mean normalized gap per similarity bin, one bar group per method."""
    fig, ax = plt.subplots(figsize=(8, 4))
    names = list(series)
    width = 0.8 / max(len(names), 1)
    for k, name in enumerate(names):
        df = series[name]
        x = np.arange(len(df))
        ax.bar(x + k * width, df["mean_normalized_gap"], width, label=name)
    first = series[names[0]]
    ax.set_xticks(
        np.arange(len(first)) + 0.4 - width / 2,
        [f"{lo:.2f}-{hi:.2f}" for lo, hi in zip(first.lo, first.hi)],
        rotation=30,
        fontsize=8,
    )
    ax.set_xlabel("model similarity to source models (eq. 4)")
    ax.set_ylabel("mean normalized estimation gap (eq. 6)")
    ax.set_title(title, fontsize=10)
    ax.legend()
    _save(fig, path)


def grid_heatmaps(table: pd.DataFrame, transforms: list[str], methods: list[str], path: str | Path) -> None:
    """BenchPress Figure 11: transform x method grids of MedAPE, MedAE and coverage (best setting
    per cell); greener = better. ``table`` has columns transform, method, medape, medae, coverage."""
    t = [x for x in transforms if x in set(table["transform"])]
    m = [x for x in methods if x in set(table["method"])]
    panels = [
        ("medape", "MedAPE (%)", "RdYlGn_r", "{:.2f}"),
        ("medae", "MedAE (points)", "RdYlGn_r", "{:.2f}"),
        ("coverage", "coverage", "RdYlGn", "{:.0%}"),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(3 * (0.75 * len(m) + 1.5), 0.5 * len(t) + 2.2))
    for ax, (col, label, cmap, fmt) in zip(np.atleast_1d(axes), panels):
        grid = table.pivot(index="transform", columns="method", values=col).reindex(index=t, columns=m)
        v = grid.to_numpy(dtype=float)
        im = ax.imshow(v, cmap=cmap, aspect="auto")
        ax.set_xticks(range(len(m)), m, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(t)), t, fontsize=7)
        for i in range(v.shape[0]):
            for j in range(v.shape[1]):
                if np.isfinite(v[i, j]):
                    ax.text(j, i, fmt.format(v[i, j]), ha="center", va="center", fontsize=5.5)
        fig.colorbar(im, ax=ax, fraction=0.04)
        ax.set_title(label, fontsize=9)
    fig.subplots_adjust(wspace=0.5)
    fig.suptitle("Transform x method grid, best setting per cell (median over held-out folds)", fontsize=10)
    _save(fig, path)


def risk_coverage_plot(curves: pd.DataFrame, path: str | Path) -> None:
    """BenchPress Figure 10: MedAE of the most trusted fraction of cells, one line per estimator."""
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for name, g in curves.groupby("estimator", sort=False):
        g = g.sort_values("kept_fraction")
        ax.plot(100 * g["kept_fraction"], g["medae"], marker="o", label=name)
    ax.set_xlabel("most trusted cells kept (%)")
    ax.set_ylabel("MedAE (score points)")
    ax.invert_xaxis()
    ax.legend(fontsize=8)
    ax.set_title("Risk-coverage of reliability estimators", fontsize=10)
    _save(fig, path)


def rank_sweep_plot(sweep: pd.DataFrame, path: str | Path) -> None:
    """BenchPress Figure 4: held-out MedAPE against Soft-Impute rank, one line per score space."""
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for name, g in sweep.groupby("transform", sort=False):
        ax.plot(g["rank"], g["medape"], marker="o", label={"identity": "raw"}.get(name, name))
    ax.set_xlabel("Soft-Impute rank")
    ax.set_ylabel("held-out MedAPE (%)")
    ax.legend(fontsize=8)
    ax.set_title("Held-out error vs rank", fontsize=10)
    _save(fig, path)


def probe_curves_plot(greedy: pd.DataFrame, random: pd.DataFrame, path: str | Path) -> None:
    """BenchPress Figure 5 / 1(b): pooled MedAE against probe budget for greedy and random probes."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for (objective, pool), g in greedy.groupby(["objective", "pool"], sort=False):
        ax.plot(g["step"], g["medae"], marker="o", label=f"greedy {objective}, {pool}")
    if len(random):
        ax.plot(random["k"], random["medae_mean"], color="gray", label="random (mean)")
        ax.fill_between(random["k"], random["medae_q25"], random["medae_q75"], color="gray", alpha=0.25)
    ax.set_xlabel("probe benchmarks revealed (k)")
    ax.set_ylabel("pooled MedAE (score points)")
    ax.legend(fontsize=7)
    ax.set_title("Budgeted scorecard recovery", fontsize=10)
    _save(fig, path)


def temporal_plot(per_target: pd.DataFrame, path: str | Path) -> None:
    """BenchPress Figure 7: per-target MedAE for each number k of revealed scores (box + points)."""
    ks = sorted(per_target["k"].unique())
    data = [per_target.loc[per_target["k"] == k, "medae"].to_numpy() for k in ks]
    fig, ax = plt.subplots(figsize=(5, 3.6))
    ax.boxplot(data, positions=range(len(ks)), widths=0.5, showfliers=False)
    for x, d in enumerate(data):
        ax.scatter(np.full(len(d), x) + np.linspace(-0.12, 0.12, len(d)), d, s=10, alpha=0.7)
    ax.set_xticks(range(len(ks)), [f"k = {k}" for k in ks])
    ax.set_ylabel("MedAE per target (score points)")
    ax.set_title("Predicting newly released models", fontsize=10)
    _save(fig, path)


def observation_pattern_plot(M: np.ndarray, path: str | Path) -> None:
    """BenchPress Figure 2: observed cells of the matrix, rows and columns sorted by coverage."""
    obs = ~np.isnan(M)
    rows = np.argsort(-obs.sum(axis=1), kind="stable")
    cols = np.argsort(-obs.sum(axis=0), kind="stable")
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.imshow(obs[rows][:, cols], cmap="Greys", aspect="auto", interpolation="nearest")
    ax.set_xlabel(f"benchmarks ({M.shape[1]}, by coverage)")
    ax.set_ylabel(f"models ({M.shape[0]}, by coverage)")
    ax.set_title(f"Observed cells: {int(obs.sum())} of {obs.size} ({100 * obs.mean():.1f}%)", fontsize=10)
    _save(fig, path)


def matrix_composition_plot(comp: dict, path: str | Path) -> None:
    """BenchPress Figure 3: benchmarks / observed cells per category, releases per quarter with
    their mean number of observed scores, and provenance of the observed cells."""
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.2), layout="constrained")
    c = comp["by_category"]
    axes[0].barh(c["category"], c["benchmarks"])
    axes[0].invert_yaxis()
    axes[0].set_title("(a) benchmarks per category", fontsize=9)
    axes[1].barh(c["category"], c["observed_cells"])
    axes[1].invert_yaxis()
    axes[1].set_title("(b) observed cells per category", fontsize=9)
    q = comp["by_quarter"]
    axes[2].bar(q["quarter"], q["models"])
    axes[2].set_title("(c) releases per quarter; (d) mean observed scores", fontsize=9)
    axes[2].tick_params(axis="x", rotation=60, labelsize=7)
    twin = axes[2].twinx()
    twin.plot(q["quarter"], q["mean_observed"], color="C1", marker="o")
    p = comp["provenance"]
    axes[3].barh(p["source_type"], p["share_pct"])
    axes[3].invert_yaxis()
    axes[3].set_title("(e) provenance of observed cells (%)", fontsize=9)
    for ax in (axes[0], axes[1], axes[3]):
        ax.tick_params(axis="y", labelsize=7)
    _save(fig, path)


def metric_curves(points: pd.DataFrame, path: str | Path, xlabel: str, title: str) -> None:
    """Kendall's tau and MAE (mean +- 1 s.e. over runs) against a setting's x value
    (``points``: ``x`` (label), ``tau``, ``tau_se``, ``mae``, ``mae_se``), one panel each."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    x = np.arange(len(points))
    for ax, metric, label in zip(axes, ("tau", "mae"), ("Kendall's tau", "MAE"), strict=True):
        ax.errorbar(x, points[metric], yerr=points[f"{metric}_se"], marker="o", capsize=3)
        ax.set_xticks(x, [str(v) for v in points["x"]], rotation=30 if len(points) > 6 else 0)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    _save(fig, path)


def metric_boxplots(per_run: pd.DataFrame, labels: dict[str, str], path: str | Path, title: str) -> None:
    """Per-run Kendall's tau and MAE by budget, one box per setting (``labels``: setting -> legend)."""
    budgets = sorted(per_run.budget.unique())
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    width = 0.8 / max(len(labels), 1)
    for ax, metric, label in zip(axes, ("tau", "mae"), ("Kendall's tau", "MAE"), strict=True):
        for k, (setting, legend) in enumerate(labels.items()):
            data = [per_run[(per_run.setting == setting) & (per_run.budget == b)][metric].to_numpy() for b in budgets]
            pos = np.arange(len(budgets)) + (k - (len(labels) - 1) / 2) * width
            box = ax.boxplot(data, positions=pos, widths=width * 0.9, patch_artist=True, showfliers=False)
            for patch in box["boxes"]:
                patch.set_facecolor(f"C{k}")
            ax.plot([], [], color=f"C{k}", label=legend, linewidth=6)
        ax.set_xticks(np.arange(len(budgets)), [str(b) for b in budgets])
        ax.set_xlabel("inference count")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    _save(fig, path)


def rank_plot(summary: pd.DataFrame, methods: list[str], columns: list[tuple[str, float]], path: str | Path) -> None:
    """Mean rank (1 = best) +- its trial-to-trial SD per method, one x position per (protocol,
    budget) column (``summary``: ``protocol, budget, method, rank, rank_sd``)."""
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(columns) + 2), 3.8))
    x = np.arange(len(columns))
    width = 0.7 / max(len(methods), 1)
    index = summary.set_index(["protocol", "budget", "method"])
    for k, m in enumerate(methods):
        ranks = [index["rank"].get((p, b, m), np.nan) for p, b in columns]
        spread = [index["rank_sd"].get((p, b, m), np.nan) for p, b in columns]
        ax.errorbar(x + (k - (len(methods) - 1) / 2) * width, ranks, yerr=spread, fmt="o", ms=4, capsize=2, label=m)
    ax.set_xticks(x, [f"{p}\n{b:g}" for p, b in columns], fontsize=7, rotation=45, ha="right")
    ax.set_ylabel("rank (1 = best), mean +- SD over trials")
    ax.invert_yaxis()
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
    _save(fig, path)
