"""The collaborative-filtering study's figures (rule ``cf_tasks_tables``)."""

from __future__ import annotations

import pandas as pd

from benchcast.output.plots import _save, plt

PANELS = [
    ("mae", "MAE (accuracy)"),
    ("weighted_mae", "weighted MAE (accuracy)"),
    ("rank_mae", "MAE (rank)"),
    ("weighted_rank_mae", "weighted MAE (rank)"),
]


def figure5(table: pd.DataFrame, path: str) -> None:
    """Figure 5: per matrix and split (rows) the four errors against the budget ratio, every method."""
    keys = sorted(table[["matrix", "split"]].drop_duplicates().itertuples(index=False, name=None)) or [("(none)", "")]
    fig, axes = plt.subplots(len(keys), len(PANELS), figsize=(4 * len(PANELS), 3 * len(keys)), squeeze=False)
    colors = {m: plt.get_cmap("tab20")(i % 20) for i, m in enumerate(sorted(table.method.unique()))}
    for row, (matrix, split) in zip(axes, keys):
        t = table[(table.matrix == matrix) & (table.split == split)]
        for ax, (column, label) in zip(row, PANELS):
            for method, g in t.groupby("method", sort=True):
                ax.plot(
                    g.ratio,
                    g[column],
                    marker="o",
                    ms=3,
                    lw=1.6 if method == "cf" else 1,
                    color=colors[method],
                    label=method,
                )
            ax.set(title=f"{matrix} ({split} split)", xlabel="budget ratio", ylabel=label)
        row[0].legend(fontsize=6)
    _save(fig, path)


def figure8(table: pd.DataFrame, path: str) -> None:
    """Figure 8: MAE and weighted MAE against the budget ratio with and without oversampling (and
    random sampling), per matrix and split."""
    keys = sorted(table[["matrix", "split"]].drop_duplicates().itertuples(index=False, name=None)) or [("(none)", "")]
    fig, axes = plt.subplots(len(keys), 2, figsize=(8, 3 * len(keys)), squeeze=False)
    for row, (matrix, split) in zip(axes, keys):
        t = table[(table.matrix == matrix) & (table.split == split)]
        for ax, (column, label) in zip(row, PANELS[:2]):
            for method, g in t.groupby("method", sort=True):
                ax.plot(g.ratio, g[column], marker="o", ms=3, label=method)
            ax.set(title=f"{matrix} ({split} split)", xlabel="budget ratio", ylabel=label)
        row[0].legend(fontsize=6)
    _save(fig, path)


def figure9(sweeps: pd.DataFrame, path: str) -> None:
    """Figure 9: inner-validation MAE and weighted MAE against each tuned parameter's value, the
    others at the values chosen before it (mean over repeats), one line per matrix and split."""
    params = list(dict.fromkeys(sweeps.param)) or ["(none)"]
    fig, axes = plt.subplots(len(params), 2, figsize=(8, 2.6 * len(params)), squeeze=False)
    for row, param in zip(axes, params):
        t = sweeps[sweeps.param == param]
        mean = t.groupby(["matrix", "split", "value"], sort=True)[["mae", "weighted_mae"]].mean().reset_index()
        for ax, (column, label) in zip(row, PANELS[:2]):
            for (matrix, split), g in mean.groupby(["matrix", "split"], sort=True):
                ax.plot(g.value, g[column], marker="o", ms=3, label=f"{matrix} ({split})")
            ax.set(xlabel=param, ylabel=f"inner {label}")
        row[0].legend(fontsize=6)
    _save(fig, path)


def figure6(points: dict[tuple[str, str], pd.DataFrame], path: str) -> None:
    """Figure 6: one panel per (matrix, task), every model pair's answer correlation on the task
    (x) against on the other tasks (y)."""
    keys = list(points) or [("(none)", "")]
    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3.6), squeeze=False)
    for ax, key in zip(axes[0], keys):
        pairs = points.get(key, pd.DataFrame({"x": [], "y": []}))
        ax.scatter(pairs.x, pairs.y, s=2, alpha=0.3)
        ax.set(title=f"{key[0]}: {key[1]}", xlabel="Pearson r on the task", ylabel="Pearson r on the other tasks")
    _save(fig, path)
