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

:func:`finish` gives every row one ``status`` (:data:`STATUSES`), and ``within_tolerance`` only where
the status is a verdict, so that the share a reader computes from the CSV
(``within_tolerance.mean()``, or the statuses counted) is the index's:

* ``not run``: the paper has the number, this run did not compute it (a slice's missing cells);
* ``not comparable``: both numbers, and a reason in ``not_comparable`` why they cannot be held
  against each other;
* ``no paper number``: ours only (the paper states the claim without this number);
* ``within`` / ``outside``: compared, and the verdict.

A row with both numbers and neither a verdict nor a reason is a study's mistake, refused here.
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


#: a row's status in a paper-vs-ours table (module docstring), verdicts first
WITHIN, OUTSIDE, NOT_COMPARABLE, NOT_RUN, NO_PAPER = (
    "within", "outside", "not comparable", "not run", "no paper number",
)  # fmt: skip
STATUSES = (WITHIN, OUTSIDE, NOT_COMPARABLE, NOT_RUN, NO_PAPER)


def _verdict(value):
    """True, False or None (blank) from a verdict cell (bool, 0/1, "True"/"False")."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    text = str(value).strip().lower()
    if text in ("true", "1", "1.0"):
        return True
    if text in ("false", "0", "0.0"):
        return False
    return None


def statuses(table: pd.DataFrame) -> pd.Series:
    """Each row's status (:data:`STATUSES`) from ``ours``, ``paper``, ``not_comparable`` and
    ``within_tolerance``; raises ``ValueError`` on a row with both numbers and neither a verdict nor
    a reason."""
    reason = table["not_comparable"].fillna("").astype(str).str.strip() if "not_comparable" in table else ""
    reason = pd.Series(reason, index=table.index)
    verdict = table["within_tolerance"].map(_verdict)
    status = np.select(
        [table["ours"].isna(), reason != "", table["paper"].isna(), verdict.eq(True), verdict.eq(False)],
        [NOT_RUN, NOT_COMPARABLE, NO_PAPER, WITHIN, OUTSIDE],
        default="",
    )
    unjudged = np.flatnonzero(status == "")
    if len(unjudged):
        raise ValueError(
            f"{len(unjudged)} paper-vs-ours rows (first: {unjudged[0]}) have ours and the paper's number "
            "but neither within_tolerance nor a not_comparable reason"
        )
    return pd.Series(status, index=table.index, dtype=object)


def finish(table: pd.DataFrame, factor=1.0) -> pd.DataFrame:
    """``table`` with its ``tolerance_factor``, ``not_comparable`` (a reason where the status is not
    comparable, else blank) and ``status`` columns after ``within_tolerance``, which is True/False
    where the status is a verdict and blank elsewhere (module docstring)."""
    out = table.copy()
    out["tolerance_factor"] = np.round(np.broadcast_to(np.asarray(factor, dtype=float), len(out)), 4)
    if "not_comparable" not in out:
        out["not_comparable"] = ""
    out["not_comparable"] = out["not_comparable"].astype(object).where(out["not_comparable"].notna(), "")
    status = statuses(out)
    out["not_comparable"] = out["not_comparable"].where(status == NOT_COMPARABLE, "")
    verdict = out["within_tolerance"].map(_verdict)
    out["within_tolerance"] = verdict.where(status.isin([WITHIN, OUTSIDE]), np.nan).astype(object)
    out["status"] = status
    extra = ("tolerance_factor", "not_comparable", "status")
    cols = [c for c in out.columns if c not in extra]
    at = cols.index("within_tolerance") + 1 if "within_tolerance" in cols else len(cols)
    return out[[*cols[:at], *extra, *cols[at:]]]


def counts(table: pd.DataFrame) -> dict[str, int]:
    """How many rows of a finished paper-vs-ours table have each status (every status, 0 if none)."""
    found = table["status"].value_counts() if "status" in table else statuses(table).value_counts()
    return {s: int(found.get(s, 0)) for s in STATUSES}


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
