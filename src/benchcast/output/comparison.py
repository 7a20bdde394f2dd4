"""Paper-vs-ours tables of a run that is a slice of a study: the tolerance widened for fewer trials,
cells that a slice cannot compare, and the run's scope in words.

Every study's ``paper_vs_ours.csv`` has ``ours``, ``paper`` and ``within_tolerance``
(:mod:`benchcast.workflow.paper_index` counts them). A slice adds two facts to each row:

* ``tolerance_factor``: how much the study's tolerance was widened because the cell's number is a
  mean over fewer trials (runs, folds, repeats) than the paper's. Its standard error grows as
  1/sqrt(trials), so the tolerance is multiplied by :func:`trial_factor`,
  sqrt(paper's trials / this run's trials) -- 1 when the run has the paper's trials or more (every
  full config), so a full run's verdicts do not change.
* ``not_comparable``: why the cell cannot be compared at all (blank when it can) -- e.g. a rank
  among the slice's 8 settings against a rank among the paper's 84, or a count over a smaller
  sample. Such a cell keeps both numbers, its ``within_tolerance`` is left blank, and the index
  reports it as not comparable instead of counting it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

#: the widening rule in words (tables, the index, the docs)
WIDENING = "tolerance x sqrt(paper's trials / this run's trials)"


def trial_factor(paper_trials, trials):
    """sqrt(paper_trials / trials) where ``trials`` < ``paper_trials``, else 1 (scalars or arrays;
    a missing trial count gives 1)."""
    paper = np.asarray(paper_trials, dtype=float)
    ours = np.asarray(trials, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.sqrt(paper / ours)
    factor = np.where(np.isfinite(factor) & (ours < paper), factor, 1.0)
    return float(factor) if factor.ndim == 0 else factor


def mark_not_comparable(table: pd.DataFrame, mask, reason: str) -> pd.DataFrame:
    """``table`` with ``reason`` in ``not_comparable`` and a blank ``within_tolerance`` where
    ``mask`` holds (a row already marked keeps its first reason)."""
    out = table.copy()
    if "not_comparable" not in out:
        out["not_comparable"] = ""
    mask = pd.Series(mask, index=out.index).fillna(False).astype(bool) & (out["not_comparable"] == "")
    out.loc[mask, "not_comparable"] = reason
    out["within_tolerance"] = out["within_tolerance"].astype(object).where(~mask, np.nan)
    return out


def finish(table: pd.DataFrame, factor=1.0) -> pd.DataFrame:
    """``table`` with its ``tolerance_factor`` and ``not_comparable`` columns (blank: comparable),
    after ``within_tolerance``."""
    out = table.copy()
    out["tolerance_factor"] = np.round(np.broadcast_to(np.asarray(factor, dtype=float), len(out)), 4)
    if "not_comparable" not in out:
        out["not_comparable"] = ""
    out["not_comparable"] = out["not_comparable"].fillna("")
    cols = [c for c in out.columns if c not in ("tolerance_factor", "not_comparable")]
    at = cols.index("within_tolerance") + 1 if "within_tolerance" in cols else len(cols)
    return out[[*cols[:at], "tolerance_factor", "not_comparable", *cols[at:]]]


def of_the_paper(count: int, paper: int, unit: str) -> str:
    """ "10 of the paper's 100 trials", "the paper's 100 trials" (or "200 trials; the paper: 100")."""
    if count == paper:
        return f"the paper's {paper} {unit}"
    if count < paper:
        return f"{count} of the paper's {paper} {unit}"
    return f"{count} {unit} (the paper: {paper})"


def words(items: Sequence[str], conj: str = "and") -> str:
    """ "a", "a and b", "a, b and c"."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conj} {items[-1]}"
