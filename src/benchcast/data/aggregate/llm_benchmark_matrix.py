"""Reader for ``llm-benchmark-matrix/data/llm_benchmark_data.json``.

:func:`read_llm_benchmark_matrix` returns 83 models x 49 benchmarks. The file
lists 15 (model, benchmark) cells twice (3 with different values): the first
record in file order is kept and conflicts are marked
``audit_status='conflicting_duplicate'``. Benchmark units (``scale``,
``is_percentage``, ``lower_is_better``) are inferred by
:func:`benchcast.data.aggregate.scales.with_inferred_scales`.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchcast.data.aggregate.parsing import (
    _BENCHMARK_SPEC,
    _check_score,
    _load_json,
    _records_frame,
    _require_keys,
    _require_list,
    _scores_frame,
    _str_or_na,
)
from benchcast.data.aggregate.scales import with_inferred_scales
from benchcast.data.aggregate.table import AggregateTables
from benchcast.errors import DataError

_LLM_MATRIX_MODEL_SPEC = (
    ("model_id", "id", "id", True),
    ("name", "name", "str", True),
    ("provider", "provider", "str", False),
    ("reasoning", "is_reasoning", "bool", False),
    ("open_weights", "open_weights", "bool", False),
    ("release_date", "release_date", "date", False),
    # Stored in millions in the source; billions matches the leaderboards' params_b.
    ("params_total_b", "params_total_M", "millions_to_billions", False),
    ("params_active_b", "params_active_M", "millions_to_billions", False),
    ("architecture", "architecture", "str", False),
)
_LLM_MATRIX_BENCHMARK_SPEC = _BENCHMARK_SPEC + (
    ("num_problems", "num_problems", "int", False),
    ("source_url", "source_url", "str", False),
)


def read_llm_benchmark_matrix(path: str | os.PathLike, *, on_duplicate: str = "first") -> AggregateTables:
    """Read ``llm-benchmark-matrix/data/llm_benchmark_data.json``.

    The file is ``{"models": [...], "benchmarks": [...], "scores": [...],
    "generated": "<timestamp>"}`` where each score is ``{"model_id",
    "benchmark_id", "score", "reference_url"}``.

    Parameters
    ----------
    path : str or path-like
        The JSON file.
    on_duplicate : {'first', 'error'}
        What to do when a (model, benchmark) cell is listed more than once.
        ``'first'`` (default) keeps the first record in file order; if a later
        record disagrees on the value, the kept row gets
        ``audit_status='conflicting_duplicate'``. ``'error'`` raises DataError.

    Returns
    -------
    AggregateTables
        ``models``: ``is_reasoning`` -> ``reasoning``; ``params_total_M`` /
        ``params_active_M`` (millions) -> ``params_total_b`` / ``params_active_b``
        (billions); ``architecture``; ``release_date_precision``.
        ``benchmarks``: ``category``, ``metric``, then ``scale``,
        ``is_percentage``, ``lower_is_better`` (see :func:`with_inferred_scales`),
        ``num_problems``, ``source_url``.
        ``scores``: ``reference_url`` -> ``source_url``; ``source_type`` is NA (the
        file does not classify sources); ``audit_status`` is NA except for
        conflicting duplicates. Sorted by (model order, benchmark order).

    Raises
    ------
    DataError
        Missing key, non-numeric or non-finite score, score for an unknown model
        or benchmark id, duplicate model or benchmark id, duplicate cell with
        ``on_duplicate='error'``, unreadable or invalid JSON.
    """
    if on_duplicate not in ("first", "error"):
        raise ValueError(f"on_duplicate must be 'first' or 'error', got {on_duplicate!r}")
    path = Path(path)
    doc = _load_json(path)
    _require_keys(doc, path, ("models", "benchmarks", "scores"), "llm-benchmark-matrix llm_benchmark_data.json")
    models = _records_frame(
        _require_list(doc["models"], path, "models"), path, "models", _LLM_MATRIX_MODEL_SPEC, "model_id"
    )
    benchmarks = _records_frame(
        _require_list(doc["benchmarks"], path, "benchmarks"),
        path,
        "benchmarks",
        _LLM_MATRIX_BENCHMARK_SPEC,
        "benchmark_id",
    )
    mpos = {m: i for i, m in enumerate(models["model_id"])}
    bpos = {b: j for j, b in enumerate(benchmarks["benchmark_id"])}

    kept: dict[tuple[int, int], dict] = {}
    for k, rec in enumerate(_require_list(doc["scores"], path, "scores")):
        if not isinstance(rec, dict):
            raise DataError(
                path,
                f"scores[{k}]",
                f"expected a JSON object, got {type(rec).__name__}",
                "each score must be an object with model_id, benchmark_id, score",
            )
        for key in ("model_id", "benchmark_id", "score"):
            if key not in rec:
                raise DataError(
                    path,
                    f"scores[{k}].{key}",
                    "required key is missing",
                    "each score needs model_id, benchmark_id and score",
                )
        m, b = rec["model_id"], rec["benchmark_id"]
        if not isinstance(m, str) or m not in mpos:
            raise DataError(
                path, f"scores[{k}].model_id", f"unknown model id {m!r:.60}", "add the model to 'models' or fix the id"
            )
        if not isinstance(b, str) or b not in bpos:
            raise DataError(
                path,
                f"scores[{k}].benchmark_id",
                f"unknown benchmark id {b!r:.60}",
                "add the benchmark to 'benchmarks' or fix the id",
            )
        score = _check_score(rec["score"], path, f"scores[{k}].score (model '{m}', benchmark '{b}')")
        url = _str_or_na(rec.get("reference_url"), path, f"scores[{k}].reference_url")
        cell = (mpos[m], bpos[b])
        if cell in kept:
            first = kept[cell]
            if on_duplicate == "error":
                raise DataError(
                    path,
                    f"scores[{k}]",
                    f"cell (model '{m}', benchmark '{b}') already given at scores[{first['index']}]",
                    "remove the duplicate record, or read with on_duplicate='first'",
                )
            if score != first["score"]:
                first["audit_status"] = "conflicting_duplicate"
            continue
        kept[cell] = {"index": k, "score": score, "url": url, "audit_status": None}

    order = sorted(kept)
    mids, bids = models["model_id"].tolist(), benchmarks["benchmark_id"].tolist()
    scores = _scores_frame(
        [mids[i] for i, _ in order],
        [bids[j] for _, j in order],
        [kept[c]["score"] for c in order],
        [kept[c]["url"] for c in order],
        [None] * len(order),
        [kept[c]["audit_status"] for c in order],
    )
    return with_inferred_scales(AggregateTables(models=models, benchmarks=benchmarks, scores=scores))
