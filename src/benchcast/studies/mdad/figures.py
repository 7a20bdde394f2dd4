"""The MDAD study's figures from its tables (rule ``mdad_figures``): the paper's Figures 3/9
(agreement curves and MDAD against size), 4 (error, tau and MDAD rows), 6/12 (seen vs held-out
half) and 13 (source models). Each figure has one column per dataset; the curves use the largest
source count a dataset ran, as the paper's 300."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchcast.output.plots import _save, plt
from benchcast.studies.mdad.analysis import PAPER_TECHNIQUES

CURVE_BIN_POINTS = 1.0  # the paper draws agreement curves in 1-point bins (MDAD uses 0.5)


def _label(method: str) -> str:
    return PAPER_TECHNIQUES.get(method, method)


def _largest(table: pd.DataFrame) -> pd.DataFrame:
    top = table.groupby("dataset").n_source.transform("max")
    return table[table.n_source == top]


def agreement_curves(agreement: pd.DataFrame, mdad: pd.DataFrame, sizes: list[int], path: str) -> None:
    """Figures 3 and 9: per dataset a row of agreement curves (one panel per size; the seen half,
    1-point bins) and MDAD against size with the pair-bootstrap interval."""
    agreement, mdad = _largest(agreement[agreement.split == "seen"]), _largest(mdad[mdad.split == "seen"])
    datasets = sorted(agreement.dataset.unique())
    fig, axes = plt.subplots(
        len(datasets), len(sizes) + 1, figsize=(3.2 * (len(sizes) + 1), 2.8 * len(datasets)), squeeze=False
    )
    for row, dataset in zip(axes, datasets):
        a = agreement[agreement.dataset == dataset].assign(correct=lambda d: d.agreement * d.pairs)
        a = a.assign(curve_bin=np.floor(a.bin / CURVE_BIN_POINTS + 1e-9) * CURVE_BIN_POINTS)
        for ax, k in zip(row, sizes):
            for method, g in a[a.k == k].groupby("method", sort=False):
                c = g.groupby("curve_bin")[["correct", "pairs"]].sum()
                ax.plot(c.index, c.correct / c.pairs, label=_label(method), lw=1)
            ax.axhline(0.8, color="grey", ls=":", lw=0.8)
            ax.set(
                title=f"{dataset}, k = {k}", xlim=(0, 20), ylim=(0, 1.02), xlabel="difference on the seen half (points)"
            )
        ax = row[-1]
        for method, g in mdad[mdad.dataset == dataset].groupby("method", sort=False):
            ax.errorbar(
                g.k,
                g.mdad,
                yerr=[g.mdad - g.mdad_lower.clip(lower=0), g.mdad_upper - g.mdad],
                label=_label(method),
                capsize=2,
                lw=1,
            )
        ax.set(xscale="log", title=f"{dataset}: MDAD", xlabel="micro-benchmark size k", ylabel="MDAD (points)")
        row[0].set_ylabel("agreement")
    axes[0][0].legend(fontsize=6, loc="lower right")
    _save(fig, path)


def metric_rows(estimation: pd.DataFrame, mdad: pd.DataFrame, path: str) -> None:
    """Figure 4: estimation error, Kendall's tau and MDAD against size (seen half)."""
    estimation, mdad = _largest(estimation[estimation.split == "seen"]), _largest(mdad[mdad.split == "seen"])
    datasets = sorted(mdad.dataset.unique())
    fig, axes = plt.subplots(3, len(datasets), figsize=(3.6 * len(datasets), 8), squeeze=False)
    for col, dataset in enumerate(datasets):
        e, m = estimation[estimation.dataset == dataset], mdad[mdad.dataset == dataset]
        for method, g in e.groupby("method", sort=False):
            axes[0][col].errorbar(g.k, g.error, yerr=1.96 * g.error_se, label=_label(method), capsize=2, lw=1)
            axes[1][col].errorbar(g.k, g.tau, yerr=1.96 * g.tau_se, capsize=2, lw=1)
        for _, g in m.groupby("method", sort=False):
            axes[2][col].plot(g.k, g.mdad, marker="o", ms=3, lw=1)
            axes[2][col].fill_between(g.k, g.mdad_lower.clip(lower=0), g.mdad_upper, alpha=0.15)
        axes[0][col].set_title(dataset)
        for r, name in enumerate(["estimation error (points)", "Kendall's tau", "MDAD (points)"]):
            axes[r][col].set(xscale="log", ylabel=name if col == 0 else None)
        axes[2][col].set_xlabel("micro-benchmark size k")
    axes[0][0].legend(fontsize=7)
    _save(fig, path)


def seen_unseen(mdad: pd.DataFrame, path: str) -> None:
    """Figures 6 and 12: MDAD against the seen half (solid) and the held-out half (dashed)."""
    mdad = _largest(mdad)
    datasets = sorted(mdad.dataset.unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(4 * len(datasets), 3.2), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        for i, (method, g) in enumerate(mdad[mdad.dataset == dataset].groupby("method", sort=False)):
            color = f"C{i}"
            for split, style in (("seen", "-"), ("unseen", "--")):
                s = g[g.split == split]
                ax.plot(s.k, s.mdad, style, color=color, lw=1, label=_label(method) if split == "seen" else None)
        ax.set(xscale="log", title=f"{dataset}: seen (solid) vs held-out (dashed)", xlabel="k", ylabel="MDAD (points)")
    axes[0][0].legend(fontsize=7)
    _save(fig, path)


def source_models(mdad: pd.DataFrame, k: int, path: str) -> None:
    """Figure 13: MDAD (seen half) against the number of source models at size ``k``."""
    mdad = mdad[(mdad.split == "seen") & (mdad.k == k)]
    datasets = sorted(mdad.dataset.unique()) or ["(none)"]
    fig, axes = plt.subplots(1, len(datasets), figsize=(4 * len(datasets), 3.2), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        for method, g in mdad[mdad.dataset == dataset].groupby("method", sort=False):
            ax.plot(g.n_source, g.mdad, marker="o", ms=3, lw=1, label=_label(method))
        ax.set(title=f"{dataset}, k = {k}", xlabel="source models", ylabel="MDAD (points)")
    axes[0][0].legend(fontsize=7)
    _save(fig, path)


def same_size(table: pd.DataFrame, gaps: dict[tuple[str, str], np.ndarray], path: str) -> None:
    """Figure 5 / Appendix L: per (dataset, group) the group's pairwise accuracy differences (left)
    and MDAD against size (right), with the share of pairs below each MDAD in the legend's place."""
    keys = sorted(gaps) or [("(none)", "(none)")]
    fig, axes = plt.subplots(len(keys), 2, figsize=(9, 3.2 * len(keys)), squeeze=False)
    for (left, right), key in zip(axes, keys):
        if key in gaps:
            left.hist(gaps[key], bins=np.arange(0, max(gaps[key].max(), 1) + 1, 1.0), color="C0")
        left.set(
            title=f"{key[0]} {key[1]}: pairwise differences", xlabel="accuracy difference (points)", ylabel="pairs"
        )
        t = table[(table.dataset == key[0]) & (table.group == key[1])]
        for method, g in t.groupby("method", sort=False):
            right.plot(g.k, g.mdad, marker="o", ms=3, lw=1, label=_label(method))
        right.set(
            xscale="log", title="MDAD of these target models", xlabel="micro-benchmark size k", ylabel="MDAD (points)"
        )
        right.legend(fontsize=6)
    _save(fig, path)


def sensitivity(table: pd.DataFrame, parameter: str, path: str) -> None:
    """Figures 7 (agreement threshold) and 8 (bin resolution): MDAD against size, one panel per
    setting of ``parameter``, per dataset (rows)."""
    t = table[table.parameter == parameter]
    datasets, values = sorted(t.dataset.unique()) or ["(none)"], sorted(t.value.unique()) or [0.0]
    fig, axes = plt.subplots(
        len(datasets), len(values), figsize=(3.2 * len(values), 2.8 * len(datasets)), squeeze=False
    )
    for row, dataset in zip(axes, datasets):
        for ax, value in zip(row, values):
            for method, g in t[(t.dataset == dataset) & (t.value == value)].groupby("method", sort=False):
                ax.plot(g.k, g.mdad, marker="o", ms=3, lw=1, label=_label(method))
            ax.set(xscale="log", title=f"{dataset}: {parameter} {value:g}", xlabel="k", ylabel="MDAD (points)")
    axes[0][0].legend(fontsize=6)
    _save(fig, path)


def _pick_figure1_dataset(mdad: pd.DataFrame, sizes: list[int]) -> str | None:
    """The dataset that ran the most of ``sizes``, then the most source models, then the most seen
    items (a full run has datasets that ran both of the paper's sizes; a slice may have none)."""
    ran = mdad.groupby("dataset").k.agg(set)
    if not len(ran):
        return None
    return max(
        ran.index, key=lambda d: (len(set(sizes) & ran[d]), mdad[mdad.dataset == d].n_source.max(), max(ran[d]), d)
    )


def nearest_sizes(ran, sizes) -> list[int]:
    """Each of ``sizes``, or the nearest size that ran where it did not (ties to the smaller)."""
    ran = sorted(ran)
    return [min(ran, key=lambda k: (abs(k - size), k)) for size in sizes]


def overview(
    estimation: pd.DataFrame, agreement: pd.DataFrame, mdad: pd.DataFrame, dataset: str | None, sizes, path: str
) -> None:
    """Figure 1: on one dataset (largest source count, seen half), Kendall's tau against size (top
    left) beside MDAD (top right) -- the aggregate and the pairwise view -- and the agreement curves
    at a small and a large size (bottom), a dashed line at 2 points and the region below 0.8 shaded.
    A size the dataset did not run is drawn at the nearest one it did, and the panel says so."""
    estimation, agreement, mdad = (_largest(t[t.split == "seen"]) for t in (estimation, agreement, mdad))
    dataset = dataset or _pick_figure1_dataset(mdad, list(sizes))
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.4))
    if dataset is None:
        fig.suptitle("no dataset ran")
        _save(fig, path)
        return
    e, m = estimation[estimation.dataset == dataset], mdad[mdad.dataset == dataset]
    for method, g in e.groupby("method", sort=False):
        axes[0][0].plot(g.k, g.tau, marker="o", ms=3, lw=1, label=_label(method))
    for _, g in m.groupby("method", sort=False):
        axes[0][1].plot(g.k, g.mdad, marker="o", ms=3, lw=1)
    axes[0][0].set(
        xscale="log", xlabel="micro-benchmark size k", ylabel="Kendall's tau", title=f"{dataset}: rank correlation"
    )
    axes[0][1].set(xscale="log", xlabel="micro-benchmark size k", ylabel="MDAD (points)", title=f"{dataset}: MDAD")
    a = agreement[agreement.dataset == dataset].assign(correct=lambda d: d.agreement * d.pairs)
    a = a.assign(curve_bin=np.floor(a.bin / CURVE_BIN_POINTS + 1e-9) * CURVE_BIN_POINTS)
    drawn = nearest_sizes(set(a.k) or set(sizes), sizes)
    for ax, k, asked in zip(axes[1], drawn, sizes):
        for method, g in a[a.k == k].groupby("method", sort=False):
            c = g.groupby("curve_bin")[["correct", "pairs"]].sum()
            ax.plot(c.index, c.correct / c.pairs, lw=1, label=_label(method))
        ax.axhspan(0, 0.8, color="grey", alpha=0.12)
        ax.axvline(2.0, color="k", ls="--", lw=0.8)
        title = f"k = {k}" if k == asked else f"k = {k} (the paper's panel: {asked}; not run here)"
        ax.set(xlim=(0, 15), ylim=(0, 1.02), title=title, xlabel="difference on the seen half (points)")
    axes[1][0].set_ylabel("agreement")
    axes[0][0].legend(fontsize=6)
    _save(fig, path)


def source_model_grid(estimation: pd.DataFrame, mdad: pd.DataFrame, path: str) -> None:
    """Figure 16: per dataset that ran several source counts, three rows (estimation error, Kendall's
    tau, MDAD; seen half) against size, one column per source count (its largest is Figure 4)."""
    estimation, mdad = estimation[estimation.split == "seen"], mdad[mdad.split == "seen"]
    counts = mdad.groupby("dataset").n_source.nunique()
    datasets = sorted(counts[counts > 1].index) or sorted(counts.index)[:1] or ["(none)"]
    sources = sorted(mdad[mdad.dataset.isin(datasets)].n_source.unique()) or [0]
    fig, axes = plt.subplots(
        3 * len(datasets), len(sources), figsize=(2.8 * len(sources), 2.3 * 3 * len(datasets)), squeeze=False
    )
    for d, dataset in enumerate(datasets):
        for c, n_source in enumerate(sources):
            e = estimation[(estimation.dataset == dataset) & (estimation.n_source == n_source)]
            m = mdad[(mdad.dataset == dataset) & (mdad.n_source == n_source)]
            for method, g in e.groupby("method", sort=False):
                axes[3 * d][c].plot(g.k, g.error, lw=1, label=_label(method))
                axes[3 * d + 1][c].plot(g.k, g.tau, lw=1)
            for _, g in m.groupby("method", sort=False):
                axes[3 * d + 2][c].plot(g.k, g.mdad, lw=1)
            axes[3 * d][c].set_title(f"{dataset}, {n_source} sources", fontsize=8)
            for r, name in enumerate(["error (points)", "Kendall's tau", "MDAD (points)"]):
                axes[3 * d + r][c].set(xscale="log", ylabel=name if c == 0 else None)
    axes[0][0].legend(fontsize=5)
    _save(fig, path)


def cross_paper(table: pd.DataFrame, summary: pd.DataFrame, path: str) -> None:
    """The cross-paper comparison: mean MDAD rank of every method at each size over the datasets
    (left: lower is better, the number of datasets where it is best in brackets), and MDAD against
    size per dataset (right, one panel each)."""
    datasets = sorted(table.dataset.unique()) or ["(none)"]
    cols = 4
    rows = 1 + (len(datasets) + cols - 1) // cols
    fig = plt.figure(figsize=(4 * cols, 3.4 * rows + 2))
    grid = fig.add_gridspec(rows, cols)
    heat = fig.add_subplot(grid[0, :])
    if not summary.empty:
        rank = summary.pivot(index="method", columns="k", values="mean_mdad_rank")
        best = summary.pivot(index="method", columns="k", values="best")
        rank = rank.loc[rank.mean(axis=1).sort_values().index]
        image = heat.imshow(rank.to_numpy(), aspect="auto", cmap="viridis_r")
        heat.set(xticks=range(len(rank.columns)), xticklabels=rank.columns, yticks=range(len(rank.index)))
        heat.set_yticklabels([_label(m) for m in rank.index], fontsize=6)
        for i, method in enumerate(rank.index):
            for j, k in enumerate(rank.columns):
                if np.isfinite(rank.at[method, k]):
                    heat.text(
                        j,
                        i,
                        f"{rank.at[method, k]:.1f} ({best.at[method, k]:.0f})",
                        ha="center",
                        va="center",
                        fontsize=5,
                        color="w",
                    )
        fig.colorbar(image, ax=heat, label="mean MDAD rank")
    heat.set(title="mean MDAD rank over the datasets (datasets where best)", xlabel="micro-benchmark size k")
    colors = {m: plt.get_cmap("tab20")(i % 20) for i, m in enumerate(sorted(table.method.unique()))}
    for i, dataset in enumerate(datasets):
        ax = fig.add_subplot(grid[1 + i // cols, i % cols])
        for method, g in table[table.dataset == dataset].groupby("method", sort=True):
            ax.plot(g.k, g.mdad, lw=1, color=colors[method], label=_label(method))
        ax.set(xscale="log", title=dataset, xlabel="k", ylabel="MDAD (points)")
        if i == 0:
            ax.legend(fontsize=5, ncol=2)
    _save(fig, path)


def percent_grid(table: pd.DataFrame, pool: str, path: str) -> None:
    """Figures 10 and 17: estimation error, Kendall's tau and MDAD (seen half) against the fraction
    of ``pool`` selected; per dataset one column at its largest source count."""
    table = _largest(table[table.split == "seen"]) if not table.empty else table
    datasets = sorted(table.dataset.unique()) or ["(none)"]
    fig, axes = plt.subplots(3, len(datasets), figsize=(3.6 * len(datasets), 8), squeeze=False)
    for col, dataset in enumerate(datasets):
        t = table[table.dataset == dataset]
        for method, g in t.groupby("method", sort=False):
            x = 100 * g.fraction
            axes[0][col].errorbar(x, g.error, yerr=1.96 * g.error_se, label=_label(method), capsize=2, lw=1)
            axes[1][col].errorbar(x, g.tau, yerr=1.96 * g.tau_se, capsize=2, lw=1)
            axes[2][col].plot(x, g.mdad, marker="o", ms=3, lw=1)
            axes[2][col].fill_between(x, g.mdad_lower.clip(lower=0), g.mdad_upper, alpha=0.15)
        sources = f", {int(t.n_source.max())} sources" if len(t) else ""
        axes[0][col].set_title(f"{dataset}{sources}")
        for r, name in enumerate(["estimation error (points)", "Kendall's tau", "MDAD (points)"]):
            axes[r][col].set(xscale="log", ylabel=name if col == 0 else None)
        axes[2][col].set_xlabel(f"% of {pool} selected")
    axes[0][0].legend(fontsize=7)
    _save(fig, path)
