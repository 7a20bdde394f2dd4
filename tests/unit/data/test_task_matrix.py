"""Several ingested datasets joined into one task matrix (benchcast.data.task_matrix)."""

import numpy as np
import pandas as pd
import pytest

from benchcast.data.task_matrix import load_task_matrix
from benchcast.errors import ConfigError


def write(root, name, ids, scores, subtasks=None, upload=None):
    out = root / name
    out.mkdir(parents=True)
    n_models, n_items = scores.shape
    models = pd.DataFrame(
        {
            "model_idx": np.arange(n_models, dtype=np.int32),
            "model_id": ids,
            "name": ids,
            "accuracy": scores.mean(axis=1),
            "excluded": scores.mean(axis=1) <= 1e-8,
            "file_role": "scores",
        }
    )
    if upload is not None:
        models["upload_date"] = upload
    items = pd.DataFrame(
        {
            "item_idx": np.arange(n_items, dtype=np.int32),
            "item_id": [f"{name}/{j}" for j in range(n_items)],
            "subtask": subtasks or [name] * n_items,
        }
    )
    responses = pd.DataFrame(
        {
            "model_idx": np.repeat(np.arange(n_models, dtype=np.int32), n_items),
            "item_idx": np.tile(np.arange(n_items, dtype=np.int32), n_models),
            "score": scores.astype(np.float32).ravel(),
        }
    )
    for table, frame in (("models", models), ("items", items), ("responses", responses)):
        frame.to_parquet(out / f"{table}.parquet")


def test_join_on_model_ids_with_subtasks_as_tasks_dedupe_and_dates(tmp_path):
    rng = np.random.default_rng(0)
    a = (rng.random((6, 4)) < 0.5).astype(float)
    a[:, 0] = 1  # no all-zero row
    a[4] = a[1]  # m4 repeats m1 on both datasets below
    b = (rng.random((5, 3)) < 0.5).astype(float)
    b[:, 0] = 1
    b[3] = b[0]  # b's m1 (row 0) and m4 (row 3)
    dates = ["2024-05-01", "2024-01-01", None, "2024-03-01", "2024-02-01", "2024-04-01"]
    write(tmp_path, "first", [f"m{i}" for i in range(6)], a, ["x", "x", "y", "y"], upload=dates)
    write(tmp_path, "second", ["m1", "m0", "m3", "m4", "m5"], b)  # no m2, other order
    m = load_task_matrix(tmp_path, "joint", ["first", "second"], release="upload_date")
    assert m.model_ids == ["m0", "m1", "m3", "m5"] and m.dropped_duplicates == 1  # m4 repeats m1
    assert m.task_names == ["first/x", "first/y", "second"] and m.task_sizes.tolist() == [2, 2, 3]
    assert np.array_equal(m.scores[1], np.concatenate([a[1], b[0]]))  # m1's rows joined by id
    assert np.isfinite(m.release).tolist() == [True, True, True, True]
    assert np.argsort(m.release).tolist() == [1, 2, 3, 0]  # m1 (Jan), m3 (Mar), m5 (Apr), m0 (May)
    assert m.task_accuracy().shape == (4, 3)
    by_position = load_task_matrix(tmp_path, "joint", ["first", "second"], release="position", dedupe=False)
    assert by_position.release.tolist() == [0, 1, 3, 4, 5]


def test_join_by_position_needs_equal_model_counts(tmp_path):
    write(tmp_path, "p", ["a0", "a1", "a2", "a3"], np.eye(4))
    write(tmp_path, "q", ["b0", "b1", "b2", "b3"], 1 - np.eye(4))
    m = load_task_matrix(tmp_path, "pos", ["p", "q"], join="position", release="none")
    assert m.scores.shape == (4, 8) and np.isnan(m.release).all() and m.model_ids == ["a0", "a1", "a2", "a3"]
    write(tmp_path, "r", ["c0", "c1", "c2", "c3", "c4"], np.ones((5, 2)))
    with pytest.raises(ConfigError, match="equal model counts"):
        load_task_matrix(tmp_path, "pos", ["p", "r"], join="position")
    with pytest.raises(ConfigError, match="join must be one of"):
        load_task_matrix(tmp_path, "pos", ["p", "q"], join="name")
