"""CSV score matrices (catalog format csv_matrix), on small files written here in the MDAD
paper's GPQA layout (items x models, model names in the header, non-model columns) and the
models x items layout."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from benchcast.data.catalog import DEFAULT_CATALOG, load_catalog
from benchcast.data.csv_matrix import read_csv_matrix
from benchcast.data.item_level import build_tables
from benchcast.errors import DataError

# 4 items x 3 models, then the two non-model columns of the GPQA dump (the second subtask is made up)
GPQA_LIKE = """org__a,org__b,org__c,subtask_range,subset
1,0,1,"(0, 2)",main
0,0,1,"(0, 2)",main
1,1,1,"(2, 4)",extra
0,1,0,"(2, 4)",extra
"""


def _catalog(tmp_path, **extra):
    entry = {
        "title": "GPQA-like",
        "suite": "t",
        "kind": "item_binary",
        "source": "mb",
        "format": "csv_matrix",
        "orientation": "items_by_models",
        "item_columns": ["subtask_range", "subset"],
        "subtask_column": "subset",
        "files": {"scores": {"path": "data/scores.csv", "sha256": None}},
        "min_accuracy": 0.0,
        **extra,
    }
    doc = {
        "sources": {"mb": {"repository": "o/r", "commit": "a" * 40}},
        "url_template": "https://raw.githubusercontent.com/{repository}/{commit}/{path}",
        "datasets": {"g": entry},
    }
    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump(doc))
    return load_catalog(tmp_path / "catalog.yaml")["g"]


def _write(tmp_path, text):
    d = tmp_path / "raw" / "mb" / "data"
    d.mkdir(parents=True, exist_ok=True)
    (d / "scores.csv").write_text(text)
    return tmp_path / "raw", d / "scores.csv"


def test_items_by_models_transposes_and_reads_subtasks(tmp_path):
    raw, path = _write(tmp_path, GPQA_LIKE)
    table = read_csv_matrix(path, item_columns=["subtask_range", "subset"], subtask_column="subset")
    assert table.model_names == ["org__a", "org__b", "org__c"]
    assert table.scores.tolist() == [[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]]
    assert table.subtasks == ["main", "main", "extra", "extra"]
    tables = build_tables(_catalog(tmp_path), raw, log=lambda *_: None)
    items, models = tables["items"], tables["models"]
    assert items.subtask.tolist() == ["main", "main", "extra", "extra"]
    assert items.subtask_position.tolist() == [0, 1, 0, 1]
    assert models.model_id.tolist() == ["org__a", "org__b", "org__c"]
    assert models.accuracy.tolist() == [0.5, 0.5, 0.75]
    assert tables["responses"].score.tolist() == [1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0]


def test_models_by_items(tmp_path):
    _, path = _write(tmp_path, "model,q1,q2\nm1,1,0\nm2,0,1\n")
    table = read_csv_matrix(path, orientation="models_by_items")
    assert table.model_names == ["m1", "m2"] and table.item_names == ["q1", "q2"]
    assert table.scores.tolist() == [[1, 0], [0, 1]]


@pytest.mark.parametrize(
    "text,kwargs,where,problem",
    [
        (GPQA_LIKE.replace("1,1,1,", "1,x,1,", 1), {}, "model 'org__b', row 4", "'x' is not a number"),
        (GPQA_LIKE, {"item_columns": ["subset"]}, "model 'subtask_range', row 2", "is not a number"),
        (GPQA_LIKE, {"item_columns": ["nope"]}, "header", "no column 'nope'"),
        (GPQA_LIKE.replace("org__c", "org__a", 1), {}, "header", "repeated model names"),
    ],
)
def test_bad_tables_name_the_file_and_the_cell(tmp_path, text, kwargs, where, problem):
    _, path = _write(tmp_path, text)
    options = {"item_columns": ["subtask_range", "subset"], **kwargs}
    with pytest.raises(DataError) as err:
        read_csv_matrix(path, **options)
    assert str(path) in str(err.value) and where in str(err.value) and problem in str(err.value)


def test_a_missing_score_is_refused_by_the_binary_check(tmp_path):
    raw, _ = _write(tmp_path, GPQA_LIKE.replace("0,0,1,", "0,,1,", 1))
    with pytest.raises(DataError, match="NaN"):
        build_tables(_catalog(tmp_path), raw, log=lambda *_: None)


def test_the_catalog_points_at_the_mirrored_gpqa_dump():
    spec = load_catalog(DEFAULT_CATALOG)["mdad_gpqa"]
    assert spec.format == "csv_matrix" and spec.files["scores"].path == "notebooks/data/gpqa/model_scores.csv"
    assert spec.extra["subtask_column"] == "subset" and spec.min_accuracy == 0.0
    assert np.isclose(spec.n_models * spec.n_items, 420 * 448)
