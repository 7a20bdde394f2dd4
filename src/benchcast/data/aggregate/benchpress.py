"""Reader for the BenchPress website dump (``benchpress/website/data.json``).

:func:`read_benchpress` returns the 84 models x 133 benchmarks matrix of the
pinned copy (2,604 observed cells) with each cell's provenance; the quirks of
the file it handles are listed in the :mod:`benchcast.data.aggregate` package
docstring. The file has no benchmark category/metric/scale: the paper's
benchmark inventory (Table 9) adds them, see
:func:`benchcast.data.aggregate.inventory.attach_benchmark_inventory`.
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
from benchcast.data.aggregate.table import SCORE_COLUMNS, AggregateTables
from benchcast.errors import DataError

_BENCHPRESS_MODEL_SPEC = (
    ("model_id", "id", "id", True),
    ("name", "name", "str", True),
    ("provider", "provider", "str", False),
    ("reasoning", "reasoning", "bool", False),
    ("open_weights", "open_weights", "bool", False),
    ("release_date", "release_date", "date", False),
)


def read_benchpress(path: str | os.PathLike) -> AggregateTables:
    """Read the BenchPress website dump (``website/data.json``).

    Parameters
    ----------
    path : str or path-like
        The ``data.json`` file. Keys ``models``, ``benchmarks``, ``observed`` and
        ``sources`` are required; the paper's ``predictions``,
        ``prediction_intervals``, ``trust_probabilities`` and ``meta`` are ignored
        on purpose (they are outputs of the method under comparison, not data).

    Returns
    -------
    AggregateTables
        ``models`` adds ``release_date_precision`` ('day'/'month'/'year') and the
        flattened ``canonical_setting_*`` fields; ``benchmarks`` has NA
        ``category``/``metric`` (the file has neither; :func:`attach_benchmark_inventory`
        adds them from the paper's Table 9); ``scores`` holds every
        non-null ``observed`` cell in (model, benchmark) order, with the cell's
        provenance ``url``, ``type`` and ``audit_status``.

    Raises
    ------
    DataError
        Missing key; ``observed``/``sources`` not shaped (n_models, n_benchmarks);
        a non-numeric or non-finite cell; duplicate model or benchmark id; bad
        model metadata types; unreadable or invalid JSON.

    Notes
    -----
    Cells whose provenance says ``audit_status == 'dropped'`` but whose value is
    still present (4 cells in the pinned copy) are kept with that status, so the
    choice to exclude them is made, visibly, downstream. Provenance attached to
    null cells (227 records) is not ingested: there is no score to attach it to.
    """
    path = Path(path)
    doc = _load_json(path)
    _require_keys(doc, path, ("models", "benchmarks", "observed", "sources"), "BenchPress website/data.json")
    model_recs = _require_list(doc["models"], path, "models")
    bench_recs = _require_list(doc["benchmarks"], path, "benchmarks")
    models = _records_frame(model_recs, path, "models", _BENCHPRESS_MODEL_SPEC, "model_id")
    benchmarks = _records_frame(bench_recs, path, "benchmarks", _BENCHMARK_SPEC, "benchmark_id")
    n_m, n_b = len(models), len(benchmarks)

    observed = _require_list(doc["observed"], path, "observed")
    sources = _require_list(doc["sources"], path, "sources")
    for key, grid in (("observed", observed), ("sources", sources)):
        if len(grid) != n_m:
            raise DataError(
                path,
                key,
                f"has {len(grid)} rows, expected {n_m} (one per model)",
                f"'{key}' must be a list of {n_m} rows in 'models' order",
            )
        for i, row in enumerate(grid):
            if not isinstance(row, list) or len(row) != n_b:
                got = f"{len(row)} entries" if isinstance(row, list) else f"a {type(row).__name__}"
                raise DataError(
                    path,
                    f"{key}[{i}]",
                    f"row has {got}, expected {n_b} (one per benchmark)",
                    f"'{key}' must be a {n_m} x {n_b} nested list in models x benchmarks order",
                )

    mids = models["model_id"].tolist()
    bids = benchmarks["benchmark_id"].tolist()
    out: dict[str, list] = {k: [] for k in SCORE_COLUMNS}
    for i in range(n_m):
        obs_row, src_row = observed[i], sources[i]
        for j in range(n_b):
            value = obs_row[j]
            if value is None:
                continue
            where = f"observed[{i}][{j}] (model '{mids[i]}', benchmark '{bids[j]}')"
            score = _check_score(value, path, where)
            prov = src_row[j]
            if prov is None:
                url = stype = status = None
            elif isinstance(prov, dict):
                sfield = f"sources[{i}][{j}]"
                url = _str_or_na(prov.get("url"), path, sfield + ".url")
                stype = _str_or_na(prov.get("type"), path, sfield + ".type")
                status = _str_or_na(prov.get("audit_status"), path, sfield + ".audit_status")
            else:
                raise DataError(
                    path,
                    f"sources[{i}][{j}]",
                    f"expected a provenance object or null, got {type(prov).__name__}",
                    "each sources cell must be null or an object with url/type/audit_status",
                )
            out["model_id"].append(mids[i])
            out["benchmark_id"].append(bids[j])
            out["score"].append(score)
            out["source_url"].append(url)
            out["source_type"].append(stype)
            out["audit_status"].append(status)
    scores = _scores_frame(*(out[k] for k in SCORE_COLUMNS))
    return AggregateTables(models=models, benchmarks=benchmarks, scores=scores)
