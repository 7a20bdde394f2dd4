"""Dispatch an aggregate (models x benchmarks) catalog entry to its reader."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchcast.data.aggregate import (
    AggregateTables,
    attach_benchmark_inventory,
    read_benchpress,
    read_llm_benchmark_matrix,
    read_sloth_leaderboard,
)
from benchcast.data.catalog import DatasetSpec
from benchcast.errors import DataError


def sloth_as_tables(frame: pd.DataFrame) -> AggregateTables:
    """A sloth leaderboard as the aggregate schema: metadata -> models, score columns -> scores."""
    score_cols = list(frame.attrs.get("score_columns", []))
    models = frame.drop(columns=score_cols).rename(columns={"model": "model_id"})
    models.insert(1, "name", models["model_id"])
    # The leaderboard has no provider/reasoning/open-weights/release-date fields: the
    # organization is the Hugging Face namespace, every listed model has open weights on the Hub.
    models.insert(2, "provider", models["model_id"].str.split("/").str[0])
    models.insert(3, "reasoning", pd.array([pd.NA] * len(models), dtype="boolean"))
    models.insert(4, "open_weights", pd.array([True] * len(models), dtype="boolean"))
    models.insert(5, "release_date", models.get("upload_date", pd.Series(pd.NaT, index=models.index)))
    benchmarks = pd.DataFrame(
        {
            "benchmark_id": score_cols,
            "name": score_cols,
            "category": pd.array([pd.NA] * len(score_cols), dtype="str"),
            "metric": [
                "0-1 raw score" if c.endswith("_raw") or c == "average_raw" else "0-100 normalized score"
                for c in score_cols
            ],
        }
    )
    long = frame.melt(id_vars=["model"], value_vars=score_cols, var_name="benchmark_id", value_name="score")
    long = long.dropna(subset=["score"]).rename(columns={"model": "model_id"})
    long["score"] = long["score"].astype("float64")
    for col in ("source_url", "source_type", "audit_status"):
        long[col] = pd.array([pd.NA] * len(long), dtype="str")
    return AggregateTables(models=models, benchmarks=benchmarks, scores=long.reset_index(drop=True))


def read_aggregate(spec: DatasetSpec, raw_dir: str | Path, repo_dir: str | Path | None = None) -> AggregateTables:
    """Read an aggregate catalog entry's ``scores`` file; attach ``files.inventory`` if it has one.

    ``repo_dir`` is where ``source: repo`` files (the inventory) are looked up: the catalog's
    :attr:`~benchcast.data.catalog.Catalog.repo_root`.
    """
    path = spec.local_path(raw_dir, "scores", repo_dir)
    if not path.exists():
        raise DataError(path, "files.scores", "file not found", "set raw_dir to a mirror that has it, or download it")
    if spec.format == "benchpress_json":
        tables = read_benchpress(path)
    elif spec.format == "llm_benchmark_matrix_json":
        tables = read_llm_benchmark_matrix(path)
    elif spec.format == "sloth_csv":
        tables = sloth_as_tables(read_sloth_leaderboard(path))
    else:
        raise DataError(
            path,
            "format",
            f"'{spec.format}' is not an aggregate format",
            "use benchpress_json, llm_benchmark_matrix_json or sloth_csv",
        )
    if "inventory" in spec.files:
        inventory = spec.local_path(raw_dir, "inventory", repo_dir)
        if not inventory.exists():
            where = "the catalog's repo_root" if spec.files["inventory"].in_repo else "raw_dir"
            raise DataError(
                inventory,
                "files.inventory",
                "file not found",
                f"restore the file in {where}, or fix datasets.{spec.name}.files.inventory in the catalog",
            )
        tables = attach_benchmark_inventory(tables, inventory)
    return tables
