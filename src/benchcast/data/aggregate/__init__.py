"""Readers for aggregate (model x benchmark score) leaderboard dumps.

Three public sources are read into one shape, :class:`AggregateTables` (models,
benchmarks, long-format observed scores), or, for the Open LLM Leaderboard CSVs, a
per-model metadata + score table:

``benchpress/website/data.json`` (:func:`read_benchpress`)
    84 models x 133 benchmarks, 2,604 observed cells. Known quirks of the pinned
    copy, all handled here:

    * ``sources`` has 2,813 non-null provenance records but only 2,586 of them sit
      on observed cells; the other 227 (174 ``dropped``, 47 ``needs_review``,
      6 ``flagged``) describe values the authors removed, so they carry no score
      and are not ingested.
    * 4 observed cells have ``audit_status == 'dropped'`` yet keep a value (all
      ``livecodebench``: gpt-oss-120b, gpt-5.1, glm-4.7, doubao-seed-2.0-pro).
      They are kept, with ``audit_status='dropped'``, so a caller can filter them.
    * 18 observed cells have no provenance record at all (source columns are NA).
    * Provenance ``type`` is ``None`` or ``''`` for some cells; both become NA.
    * Release dates come at three precisions (``2025-04-14``, ``2024-09``,
      ``2025``); a partial date is placed on the first day of its period and
      ``release_date_precision`` says which precision the source gave.
    * Scores are not all percentages: Elo ratings (Chatbot Arena, GDPval),
      a Codeforces rating, dollars (SWE-Lancer freelance earnings, up to 112,000;
      Vending-Bench 2 net worth, up to ~8,000), an index (AA Intelligence Index)
      and lower-is-better edit distances (OmniDocBench, 0.1-0.2). No rescaling is
      done here.
    * Some columns mix conventions across sources: ``omnidocbench_1.5`` holds 2
      values on the (1 - edit distance) x 100 scale (89.1, 91.2) among edit
      distances, and the three hallucination-*rate* columns (``factscore``,
      ``longfact_*``) hold the complementary higher-is-better scores (90-99) from
      some sources. They are kept as published.
    * Benchmarks only have ``id`` and ``name``; :func:`read_benchpress` leaves
      ``category``/``metric`` NA. The paper's benchmark inventory (Table 9,
      ``resources/paper/benchpress_benchmark_inventory.csv``) supplies them, plus
      ``scale``, ``is_percentage``, ``lower_is_better`` and ``items``, through
      :func:`attach_benchmark_inventory` (the ingest does this when the catalog
      entry has a ``files.inventory`` role).

``llm-benchmark-matrix/data/llm_benchmark_data.json`` (:func:`read_llm_benchmark_matrix`)
    83 models, 49 benchmarks, 1,390 score records but only 1,375 distinct
    (model, benchmark) cells: 15 cells are listed twice, 3 of them with different
    values. The first record in file order is kept (deterministic; in 2 of the 3
    conflicts it is the model's own model card) and the conflicts are marked with
    ``audit_status='conflicting_duplicate'``. ``scale``/``is_percentage``/
    ``lower_is_better`` are inferred by :func:`infer_scale` and
    :func:`infer_lower_is_better` from the metric text, the name and the
    observed range (the same rule cross-checks the BenchPress inventory).

``sloth/data/*.csv`` (:func:`read_sloth_leaderboard`)
    The Open LLM Leaderboard v2 (729 rows) and v1 (7,169 rows) exports list some
    models more than once, one row per evaluated precision (bfloat16, float16,
    4bit, ...). One row per model is kept, chosen by :data:`PRECISION_PREFERENCE`.

Modules
    :mod:`~benchcast.data.aggregate.table` (:class:`AggregateTables`, the column
    schema), :mod:`~benchcast.data.aggregate.parsing` (JSON/CSV validation helpers
    shared by the readers), :mod:`~benchcast.data.aggregate.benchpress`,
    :mod:`~benchcast.data.aggregate.llm_benchmark_matrix`,
    :mod:`~benchcast.data.aggregate.sloth` (one per source),
    :mod:`~benchcast.data.aggregate.scales` (unit inference),
    :mod:`~benchcast.data.aggregate.inventory` (the Table 9 benchmark inventory)
    and :mod:`~benchcast.data.aggregate.parquet` (Parquet output and the matrix read back). Import the
    public names from ``benchcast.data.aggregate``.

Nothing here unpickles anything: all inputs are JSON or CSV.
"""

from __future__ import annotations

from benchcast.data.aggregate.benchpress import read_benchpress
from benchcast.data.aggregate.inventory import INVENTORY_COLUMNS, attach_benchmark_inventory, read_benchmark_inventory
from benchcast.data.aggregate.llm_benchmark_matrix import read_llm_benchmark_matrix
from benchcast.data.aggregate.parquet import load_score_matrix, write_aggregate
from benchcast.data.aggregate.scales import (
    SCALE_COLUMNS,
    SCALES,
    infer_lower_is_better,
    infer_scale,
    with_inferred_scales,
)
from benchcast.data.aggregate.sloth import (
    PRECISION_PREFERENCE,
    SLOTH_COLUMN_MAP,
    model_metadata_for,
    read_sloth_leaderboard,
)
from benchcast.data.aggregate.table import BENCHMARK_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, AggregateTables

__all__ = [
    "load_score_matrix",
    "BENCHMARK_COLUMNS",
    "INVENTORY_COLUMNS",
    "MODEL_COLUMNS",
    "PRECISION_PREFERENCE",
    "SCALES",
    "SCALE_COLUMNS",
    "SCORE_COLUMNS",
    "SLOTH_COLUMN_MAP",
    "AggregateTables",
    "attach_benchmark_inventory",
    "infer_lower_is_better",
    "infer_scale",
    "model_metadata_for",
    "read_benchmark_inventory",
    "read_benchpress",
    "read_llm_benchmark_matrix",
    "read_sloth_leaderboard",
    "with_inferred_scales",
    "write_aggregate",
]
