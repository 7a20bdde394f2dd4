"""Benchmark units: which scale a benchmark column is on, and its direction.

:func:`infer_scale` and :func:`infer_lower_is_better` are the one rule every
aggregate source shares: llm-benchmark-matrix gets its ``scale``,
``is_percentage`` and ``lower_is_better`` columns from it
(:func:`with_inferred_scales`), and the hand-checked BenchPress inventory
(the paper's Table 9, ``resources/paper/benchpress_benchmark_inventory.csv``) is
tested against it. Only ``percent`` columns are on a 0-100 scale where the
paper's logit/probit-style transforms make sense.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from benchcast.data.aggregate.table import AggregateTables

#: Units a benchmark column can be on. Only ``percent`` columns are on a 0-100
#: scale where logit/probit-style transforms make sense.
SCALES = ("percent", "elo", "rating", "dollars", "index", "score", "edit_distance")
#: Columns added to ``benchmarks`` by :func:`with_inferred_scales` and
#: :func:`attach_benchmark_inventory` (one schema for every aggregate source).
SCALE_COLUMNS = ("scale", "is_percentage", "lower_is_better")


# Unit words, tried in this order on the benchmark name first, then on the metric
# text: the name is the more specific of the two ("Codeforces Rating" has metric
# "Elo rating" in both BenchPress and llm-benchmark-matrix, but is a rating).
_SCALE_WORDS = (
    ("edit_distance", re.compile(r"edit[\s_-]*distance")),
    ("elo", re.compile(r"\belo\b")),
    ("rating", re.compile(r"\brating\b")),
    ("dollars", re.compile(r"\$|\bdollars?\b|\busd\b")),
    ("index", re.compile(r"\bindex\b")),
)
_LOWER_IS_BETTER = re.compile(
    r"lower\s*(?:is|=|-is-)?\s*better|edit[\s_-]*distance|hallucination[\s_-]*rate|"
    r"\berror[\s_-]*rate\b"
)
_BLANK_METRIC = {"", "-", "\u2014", "\u2013", "n/a", "na"}


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    text = str(value).strip().lower()
    return "" if text in _BLANK_METRIC else text


def _finite_or_none(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    out = float(value)
    return out if math.isfinite(out) else None


def infer_scale(metric: Any, observed_min: Any = None, observed_max: Any = None, *, name: Any = None) -> str:
    """Infer a benchmark column's unit from its metric text, name and observed range.

    The one rule every aggregate source shares (llm-benchmark-matrix uses it
    directly; the hand-checked BenchPress inventory is tested against it).

    Parameters
    ----------
    metric : str or None
        The metric as the source states it (``"% correct"``, ``"Elo rating"``,
        ``"index score"``...). None, NA, ``""`` and ``"—"`` mean "not stated".
    observed_min, observed_max : float or None
        The smallest and largest observed score of the column (None/NaN: no
        scores).
    name : str or None
        The benchmark's display name, e.g. ``"Chatbot Arena Elo"``.

    Returns
    -------
    str
        One of :data:`SCALES`:

        1. a unit word in the name, else in the metric, decides: "edit
           distance" -> ``edit_distance``; "Elo" -> ``elo``; "rating" ->
           ``rating``; "$"/"dollar(s)"/"USD" -> ``dollars``; "index" -> ``index``;
        2. otherwise, a column with a score outside [0, 100] -> ``score`` (not a
           percentage, unit unknown);
        3. otherwise ``percent``: "%" metrics, and unlabelled or generic
           ("overall score") metrics whose scores all lie in [0, 100] -- the
           paper transforms every column but Codeforces, Chatbot Arena and GDPval
           as a percentage.

    Notes
    -----
    A ``percent`` verdict for a column without any observed score rests on the
    text alone. The rule cannot tell dollars from other unbounded scores when
    neither the name nor the metric says so (BenchPress ``vending_bench_2`` is
    a dollar net worth; the rule says ``score``).
    """
    for text in (_text(name), _text(metric)):
        for scale, pattern in _SCALE_WORDS:
            if pattern.search(text):
                return scale
    lo, hi = _finite_or_none(observed_min), _finite_or_none(observed_max)
    if (lo is not None and lo < 0) or (hi is not None and hi > 100):
        return "score"
    return "percent"


def infer_lower_is_better(metric: Any, *, name: Any = None, scale: Any = None) -> bool:
    """True when the name or metric says lower is better.

    That is: "lower is better" / "lower=better", an edit distance (also
    ``scale='edit_distance'``), a hallucination rate or an error rate.
    Everything else (accuracy, pass rate, Elo, dollars earned...) is higher-is-better.
    """
    if scale == "edit_distance":
        return True
    return any(_LOWER_IS_BETTER.search(t) for t in (_text(name), _text(metric)))


def _observed_ranges(tables: AggregateTables) -> pd.DataFrame:
    return tables.scores.groupby("benchmark_id", sort=False)["score"].agg(["min", "max"])


def _place_after_metric(benchmarks: pd.DataFrame, new: dict[str, pd.Series]) -> pd.DataFrame:
    """Put ``new`` columns right after ``metric`` (replacing same-named columns)."""
    out = benchmarks.drop(columns=[c for c in new if c in benchmarks.columns])
    at = list(out.columns).index("metric") + 1
    for offset, (col, values) in enumerate(new.items()):
        # .array keeps the extension dtype and drops the index (rows are aligned by position)
        out.insert(at + offset, col, values.array if isinstance(values, pd.Series) else values)
    return out


def with_inferred_scales(tables: AggregateTables) -> AggregateTables:
    """Add ``scale``, ``is_percentage`` and ``lower_is_better`` to ``tables.benchmarks``.

    Each benchmark gets :func:`infer_scale` of its metric, name and observed
    score range, ``is_percentage = scale == 'percent'`` and
    :func:`infer_lower_is_better`. The columns go right after ``metric``
    (``scale`` str, the flags nullable ``boolean``); existing columns of those
    names are replaced. The input is not modified.
    """
    ranges = _observed_ranges(tables)
    b = tables.benchmarks
    scales, lower = [], []
    for bid, name, metric in zip(b["benchmark_id"], b["name"], b["metric"]):
        lo, hi = (ranges.at[bid, "min"], ranges.at[bid, "max"]) if bid in ranges.index else (None, None)
        scale = infer_scale(metric, lo, hi, name=name)
        scales.append(scale)
        lower.append(infer_lower_is_better(metric, name=name, scale=scale))
    benchmarks = _place_after_metric(
        b,
        {
            "scale": pd.Series(scales, dtype="str"),
            "is_percentage": pd.Series([s == "percent" for s in scales], dtype="boolean"),
            "lower_is_better": pd.Series(lower, dtype="boolean"),
        },
    )
    return AggregateTables(models=tables.models, benchmarks=benchmarks, scores=tables.scores)
