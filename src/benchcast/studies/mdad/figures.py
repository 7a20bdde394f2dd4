"""The MDAD study's figures from its tables (rule ``mdad_figures``): the paper's Figures 3/9
(agreement curves and MDAD against size), 4 (error, tau and MDAD rows), 6/12 (seen vs held-out
half) and 13 (source models). Each figure has one column per dataset; the curves use the largest
source count a dataset ran, as the paper's 300."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchcast.plots import _save, plt
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
