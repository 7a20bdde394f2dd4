"""The aggregate table type: :class:`AggregateTables` and its column schema.

Every reader of :mod:`benchcast.data.aggregate` (BenchPress, llm-benchmark-matrix,
and the sloth leaderboards via :mod:`benchcast.data.aggregate_ingest`) returns
this one shape: a models table, a benchmarks table and a long-format table of
observed scores. The required columns of each are :data:`MODEL_COLUMNS`,
:data:`BENCHMARK_COLUMNS` and :data:`SCORE_COLUMNS`; the constructor checks them
so a hand-built table fails early, and :meth:`AggregateTables.to_matrix`
validates the ids when it pivots the scores to a models x benchmarks matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchcast.errors import DataError

MODEL_COLUMNS = ("model_id", "name", "provider", "reasoning", "open_weights", "release_date")
BENCHMARK_COLUMNS = ("benchmark_id", "name", "category", "metric")
SCORE_COLUMNS = ("model_id", "benchmark_id", "score", "source_url", "source_type", "audit_status")


@dataclass(frozen=True)
class AggregateTables:
    """A model x benchmark score table in normalised (tidy) form.

    Attributes
    ----------
    models : pandas.DataFrame
        One row per model, in source order. Columns ``model_id`` (str, unique),
        ``name``, ``provider`` (str or NA), ``reasoning``, ``open_weights``
        (nullable ``boolean``), ``release_date`` (``datetime64[ns]`` or NaT), then
        any extra metadata the source has (e.g. ``release_date_precision``,
        ``params_total_b``, ``canonical_setting_mode``).
    benchmarks : pandas.DataFrame
        One row per benchmark, in source order. Columns ``benchmark_id`` (str,
        unique), ``name``, ``category``, ``metric`` (str or NA), then extras.
    scores : pandas.DataFrame
        One row per observed cell, sorted by (model order, benchmark order).
        Columns ``model_id``, ``benchmark_id``, ``score`` (float64, finite),
        ``source_url``, ``source_type``, ``audit_status`` (str or NA).
    """

    models: pd.DataFrame
    benchmarks: pd.DataFrame
    scores: pd.DataFrame

    def __post_init__(self) -> None:
        # Catch hand-built tables early: every consumer relies on these columns.
        for label, frame, required in (
            ("models", self.models, MODEL_COLUMNS),
            ("benchmarks", self.benchmarks, BENCHMARK_COLUMNS),
            ("scores", self.scores, SCORE_COLUMNS),
        ):
            if not isinstance(frame, pd.DataFrame):
                raise DataError(
                    None,
                    label,
                    f"expected a pandas DataFrame, got {type(frame).__name__}",
                    "build AggregateTables with one of the read_* functions",
                )
            missing = [c for c in required if c not in frame.columns]
            if missing:
                raise DataError(None, label, f"missing columns {missing}", f"provide all of {list(required)}")

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_models, n_benchmarks)``."""
        return len(self.models), len(self.benchmarks)

    def to_matrix(self) -> pd.DataFrame:
        """Return the wide models x benchmarks score matrix.

        Returns
        -------
        pandas.DataFrame
            float64, index ``model_id`` (models order), columns ``benchmark_id``
            (benchmarks order), NaN where no score was observed. Models or
            benchmarks without any score are kept as all-NaN rows/columns.

        Raises
        ------
        DataError
            If a score refers to an unknown model or benchmark, or a
            (model, benchmark) cell occurs twice.
        """
        model_index = pd.Index(self.models["model_id"], name="model_id")
        bench_index = pd.Index(self.benchmarks["benchmark_id"], name="benchmark_id")
        rows = model_index.get_indexer(self.scores["model_id"])
        cols = bench_index.get_indexer(self.scores["benchmark_id"])
        for label, pos, ids in (
            ("model_id", rows, self.scores["model_id"]),
            ("benchmark_id", cols, self.scores["benchmark_id"]),
        ):
            bad = np.flatnonzero(pos < 0)
            if bad.size:
                raise DataError(
                    None,
                    f"scores.{label}",
                    f"{bad.size} score rows refer to unknown ids, e.g. {ids.iloc[bad[0]]!r}",
                    f"add the id to the {'models' if label == 'model_id' else 'benchmarks'} table "
                    "or drop those score rows",
                )
        flat = rows.astype(np.int64) * len(bench_index) + cols
        if len(np.unique(flat)) != len(flat):
            dup = pd.Series(flat).duplicated().to_numpy().nonzero()[0][0]
            raise DataError(
                None,
                "scores",
                f"cell ({self.scores['model_id'].iloc[dup]!r}, "
                f"{self.scores['benchmark_id'].iloc[dup]!r}) occurs more than once",
                "keep one score per (model_id, benchmark_id)",
            )
        matrix = np.full((len(model_index), len(bench_index)), np.nan, dtype=np.float64)
        matrix[rows, cols] = self.scores["score"].to_numpy(dtype=np.float64)
        return pd.DataFrame(matrix, index=model_index, columns=bench_index)
