"""The comparison's tables: each result file scored per trial under its protocol, then the methods
ranked per protocol, budget and trial, and summarised with the trial-to-trial spread.

A *trial* is the protocol's own replicate (a split of the models, a run, a repeat, a fold of
held-out models); the methods of one trial saw the same split, so ranking them within a trial is a
paired comparison. Per trial, a method's score is its mean over the protocol's groups (datasets,
splits, matrices); only the (group, trial) pairs every compared method has enter. Ranks: 1 is the
lowest score (the best), ties share the mean rank. ``rank_sd`` is the spread of a method's rank
from trial to trial: two methods whose mean ranks differ by less than it are not told apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from benchcast.output.tables import to_markdown

KEYS = ["method", "budget", "group", "trial"]


def protocol_scores(
    study_cls, runs: Sequence[Mapping], frames: Sequence[pd.DataFrame], settings: Mapping
) -> pd.DataFrame:
    """Per (method, budget, group, trial) of one protocol: ``score`` and the protocol's other
    measures, from each run's result file (``frames``, in the order of ``runs``)."""
    parts = []
    for run, frame in zip(runs, frames, strict=True):
        trials = study_cls.protocol_trials(frame, settings)
        if run["budget"] is not None:
            trials = trials.assign(budget=run["budget"])
        parts.append(trials.assign(method=run["method"], group=run["group"]))
    out = pd.concat(parts, ignore_index=True)
    out["budget"] = out["budget"].astype(float)
    extras = [c for c in out.columns if c not in (*KEYS, "score")]
    return out[[*KEYS, "score", *extras]].sort_values(KEYS, kind="stable").reset_index(drop=True)


def _budget(value: float) -> str:
    return f"{value:g}"


def rankings(scores: pd.DataFrame, methods: Sequence[str]) -> pd.DataFrame:
    """Per budget and method (in ``methods``' order): mean and trial-to-trial SD of the score and
    of the rank, the trials and groups they rest on, and the means of the other measures."""
    extras = [c for c in scores.columns if c not in (*KEYS, "score")]
    rows = []
    for budget, at in scores.groupby("budget", sort=True):
        present = [m for m in methods if m in set(at["method"])]
        per_key = at.groupby(["group", "trial"])["method"].nunique()
        common = per_key[per_key == len(present)].index
        kept = at.set_index(["group", "trial"]).loc[common].reset_index()
        per_trial = kept.groupby(["trial", "method"], sort=True)[["score", *extras]].mean()
        rank = per_trial["score"].groupby(level="trial").rank(method="average")
        for m in present:
            s = per_trial.xs(m, level="method")
            r = rank.xs(m, level="method")
            rows.append(
                {
                    "budget": budget,
                    "method": m,
                    "rank": float(r.mean()),
                    "rank_sd": float(r.std(ddof=1)) if len(r) > 1 else float("nan"),
                    "score": float(s["score"].mean()),
                    "score_sd": float(s["score"].std(ddof=1)) if len(s) > 1 else float("nan"),
                    **{c: float(s[c].mean()) for c in extras},
                    "trials": int(len(s)),
                    "groups": int(kept.loc[kept["method"] == m, "group"].nunique()),
                }
            )
    return pd.DataFrame(rows)


def summary(tables: Mapping[str, pd.DataFrame], methods: Sequence[str]) -> pd.DataFrame:
    """Every protocol's ranking in one long table: protocol, budget, method, rank, rank_sd, score,
    score_sd, trials."""
    cols = ["budget", "method", "rank", "rank_sd", "score", "score_sd", "trials"]
    parts = [t[cols].assign(protocol=p) for p, t in tables.items() if len(t)]
    out = pd.concat(parts, ignore_index=True)[["protocol", *cols]]
    order = {m: i for i, m in enumerate(methods)}
    return out.sort_values(
        ["protocol", "budget", "method"], key=lambda c: c.map(order) if c.name == "method" else c, kind="stable"
    ).reset_index(drop=True)


def summary_columns(summary_table: pd.DataFrame, protocol_order: Sequence[str]) -> list[tuple[str, float]]:
    """The summary's (protocol, budget) columns: the protocols in order, each's budgets ascending."""
    return [
        (p, b)
        for p in protocol_order
        for b in sorted(summary_table.loc[summary_table["protocol"] == p, "budget"].unique())
    ]


def summary_markdown(summary_table: pd.DataFrame, methods: Sequence[str], protocol_order: Sequence[str]) -> str:
    """One row per method, one column per (protocol, budget): ``mean rank ± trial-to-trial SD``."""
    cells = summary_table.assign(
        column=[f"{p} {_budget(b)}" for p, b in zip(summary_table["protocol"], summary_table["budget"])],
        value=[f"{r:.2f} ± {s:.2f}" for r, s in zip(summary_table["rank"], summary_table["rank_sd"])],
    )
    columns = [f"{p} {_budget(b)}" for p, b in summary_columns(summary_table, protocol_order)]
    wide = cells.pivot(index="method", columns="column", values="value").reindex(index=list(methods), columns=columns)
    wide = wide.fillna("-").reset_index()
    return to_markdown(wide)


def ranking_markdown(table: pd.DataFrame) -> str:
    shown = table.assign(budget=table["budget"].map(_budget))
    return to_markdown(shown.round(3))


def side_by_side(summary_table: pd.DataFrame, method: str, other: str) -> pd.DataFrame:
    """Two methods' mean ranks per protocol and budget, with the larger of their trial-to-trial SDs:
    ``apart`` is whether the ranks differ by more than that spread (for a reimplementation of a
    method, it should never be)."""
    a = summary_table[summary_table["method"] == method].set_index(["protocol", "budget"])
    b = summary_table[summary_table["method"] == other].set_index(["protocol", "budget"])
    both = a.index.intersection(b.index, sort=False)
    out = pd.DataFrame(
        {
            f"rank_{method}": a.loc[both, "rank"],
            f"rank_{other}": b.loc[both, "rank"],
            "spread": np.fmax(a.loc[both, "rank_sd"], b.loc[both, "rank_sd"]),
        }
    )
    out["apart"] = (out[f"rank_{method}"] - out[f"rank_{other}"]).abs() > out["spread"]
    return out.reset_index()
