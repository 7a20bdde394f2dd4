"""The held-out test of ``benchcast compare``'s paired intervals (:mod:`benchcast.new_model.compare`).

In the held-out test (:func:`benchcast.studies.heldout_intervals.heldout.heldout`) the models of one
outer fold are new models that answered one fit's selection, each from its own row: every pair of
them is two new models compared as ``compare`` compares them. For each pair ``(a, b)`` (``b - a``):
the estimated difference, its paired interval, the truth, and the two unpaired (conformal)
intervals combined (``sqrt(2)`` times one half-width: what a user reading two ``estimate`` outputs
has). Three kinds of pairs are summarised: **all** pairs of a fold; **nearest** pairs, each model
with the fold's model closest to it by full-benchmark score (a few points apart, or less, but
answering many items differently); and **alike** pairs, each model with the fold's model whose
answers over the whole benchmark differ from its own on the fewest items (what two checkpoints of one
model are: close in score *and* in what they get right); and **family** pairs, two models of one
family as the leaderboard names it (:func:`family_keys`: one organisation, architecture and size, as
a base model and its chat, instruct or long-context versions), held out together (the held-out test
deals a family into one fold). Coverage is the share of pairs whose interval holds the true difference; a **verdict** is
an interval that excludes zero, and it is right when its sign is the true difference's.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from benchcast.new_model.compare import differing_on_shared, paired_calibration, paired_intervals
from benchcast.new_model.fits import conformal_halfwidth

PAIR_COLUMNS = [
    "fold",
    "model_a",
    "model_b",
    "truth_diff",
    "difference",
    "lower",
    "upper",
    "conformal_lower",
    "conformal_upper",
    "unpaired_halfwidth",
    "differing",
    "shared",
    "nearest",
    "alike",
    "family",
]

#: the model metadata that names a family (the Open LLM Leaderboard's; HELM's boards have none)
FAMILY_FIELDS = ("organization", "architecture", "params_b")


def nearest_pairs(distance: np.ndarray) -> set[tuple[int, int]]:
    """``(i, j)``, ``i < j``: each model with the one at the smallest ``distance`` (a square matrix;
    the first on ties)."""
    distance = np.array(distance, dtype=np.float64)
    np.fill_diagonal(distance, np.inf)
    return {(min(i, j), max(i, j)) for i, j in enumerate(np.argmin(distance, axis=1).tolist())}


def family_keys(models: pd.DataFrame, model_ids) -> list[str | None]:
    """Each of ``model_ids``' family in ``models`` (a dataset's ``models.parquet``): its organisation,
    architecture and size in billions of parameters, or None when the table lacks any of them."""
    if not set(FAMILY_FIELDS) <= set(models.columns):
        return [None] * len(model_ids)
    known = models.dropna(subset=list(FAMILY_FIELDS)).drop_duplicates("model_id").set_index("model_id")
    keys = {i: f"{r.organization}|{r.architecture}|{float(r.params_b):g}" for i, r in known.iterrows()}
    return [keys.get(i) for i in model_ids]


def fold_pairs(fold: int, fit, level: float, members: list[dict], item_ids=None) -> list[dict]:
    """Every pair of one held-out fold's ``members`` (dicts with ``model_id``, ``truth``,
    ``estimate``, ``answers``: item -> score, and ``row``: the model's scores on every item),
    compared as ``benchcast compare`` compares them: ``lower``/``upper`` its interval (the method's own
    where it has one, given the leaderboard's ``item_ids``), ``conformal_lower``/``upper`` the
    conformal one from ``fit``'s paired calibration; a member's ``family`` (optional) names its family."""
    if len(members) < 2:
        return []
    calibration = paired_calibration(fit.pairs, level)
    unpaired = math.sqrt(2.0) * conformal_halfwidth(fit.calibration, level)
    truth = np.array([m["truth"] for m in members])
    close = nearest_pairs(np.abs(truth[:, None] - truth[None, :]))
    rows_all = np.array([m["row"] for m in members], dtype=np.float64)
    alike = nearest_pairs(np.array([np.abs(rows_all - row).sum(axis=1) for row in rows_all]))  # a row at a time
    rows = []
    for i, a in enumerate(members):
        for j in range(i + 1, len(members)):
            b = members[j]
            differing, shared = differing_on_shared(a["answers"], b["answers"])
            diff = b["estimate"] - a["estimate"]
            mode = "auto" if item_ids is not None else "conformal"
            lower, upper, c_lower, c_upper, _ = paired_intervals(
                fit, a["answers"], b["answers"], diff, calibration, level, mode, item_ids
            )
            rows.append(
                {
                    "fold": fold,
                    "model_a": a["model_id"],
                    "model_b": b["model_id"],
                    "truth_diff": b["truth"] - a["truth"],
                    "difference": diff,
                    "lower": lower,
                    "upper": upper,
                    "conformal_lower": c_lower,
                    "conformal_upper": c_upper,
                    "unpaired_halfwidth": unpaired,
                    "differing": differing,
                    "shared": shared,
                    "nearest": (i, j) in close,
                    "alike": (i, j) in alike,
                    "family": a.get("family") is not None and a.get("family") == b.get("family"),
                }
            )
    return rows


def conformal_again(pairs: pd.DataFrame, calibration_pairs: pd.DataFrame, level: float, calibrate=paired_calibration):
    """The held-out ``pairs`` (:data:`PAIR_COLUMNS`) with their conformal interval made again from
    each held-out fold's fit's ``calibration_pairs`` (``heldout_fold`` and the fit's pair columns) by
    ``calibrate`` (``(pairs, level) -> PairedCalibration``): with the default, the intervals the
    held-out run wrote; with another, what that calibration would have given the same pairs."""
    out = pairs.copy()
    for fold, rows in pairs.groupby("fold"):
        calibration = calibrate(calibration_pairs[calibration_pairs.heldout_fold == fold], level)
        bounds = [calibration.interval(d, n) for d, n in zip(rows.difference, rows.differing)]
        out.loc[rows.index, ["conformal_lower", "conformal_upper"]] = np.array(bounds, dtype=np.float64).reshape(-1, 2)
    return out


def summarise_pairs(pairs: pd.DataFrame) -> dict:
    """Coverage of the paired intervals, their median half-width against the unpaired intervals
    combined, how often a verdict is given and how often its sign is right (0-1 scale)."""
    covered = (pairs.lower <= pairs.truth_diff) & (pairs.truth_diff <= pairs.upper)
    # pairs of a run before the conformal columns existed: every interval was the conformal one
    c_lower, c_upper = pairs.get("conformal_lower", pairs.lower), pairs.get("conformal_upper", pairs.upper)
    conformal = (c_lower <= pairs.truth_diff) & (pairs.truth_diff <= c_upper)
    half = (pairs.upper - pairs.lower) / 2
    decided = (pairs.lower > 0) | (pairs.upper < 0)
    right = np.sign(pairs.difference) == np.sign(pairs.truth_diff)
    return {
        "pairs": len(pairs),
        "coverage": float(covered.mean()) if len(pairs) else float("nan"),
        "median_halfwidth": float(half.median()),
        "conformal_coverage": float(conformal.mean()) if len(pairs) else float("nan"),
        "conformal_median_halfwidth": float(((c_upper - c_lower) / 2).median()),
        "median_unpaired_halfwidth": float(pairs.unpaired_halfwidth.median()),
        "width_ratio": float((half / pairs.unpaired_halfwidth).median()),
        "median_abs_truth_diff": float(pairs.truth_diff.abs().median()),
        "verdicts": float(decided.mean()) if len(pairs) else float("nan"),
        "verdict_sign_right": float(right[decided].mean()) if decided.any() else float("nan"),
    }


def paired_table(cells, frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Per (dataset, method, budget) and kind of pairs (``all``, ``nearest``, ``alike`` and, where the
    leaderboard names families, ``family``): :func:`summarise_pairs`."""
    rows = []
    for (dataset, method, budget), pairs in zip(cells, frames):
        kinds = [("all", pairs), ("nearest", pairs[pairs.nearest]), ("alike", pairs[pairs.alike])]
        if "family" in pairs and pairs.family.any():
            kinds.append(("family", pairs[pairs.family]))
        for kind, chosen in kinds:
            rows.append(
                {
                    "dataset": dataset,
                    "method": method,
                    "budget": int(budget),
                    "pairs_kind": kind,
                    **summarise_pairs(chosen),
                }
            )
    return pd.DataFrame(rows)
