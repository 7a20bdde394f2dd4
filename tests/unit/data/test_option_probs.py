"""TailoredBench's per-option probability dumps (ARC-Challenge, Hellaswag layout), on small files
written here in the released repository's layout: ``BenchmarkDatasets/<bench>/{source,target}_model_alldata.npy``
and ``gt_label.npy``."""

from __future__ import annotations

import os

import numpy as np
import pytest
import yaml

from benchcast.data.catalog import DEFAULT_CATALOG, load_catalog
from benchcast.data.item_level import build_tables, load_response_matrix, write_tables
from benchcast.data.safe_pickle import safe_load_npy
from benchcast.errors import DataError, UnsafePickleError

LABELS = np.array([0, 2, 1, 3], dtype=np.int64)
# 3 models x 4 questions with 2, 3, 4 and 4 options (ARC-like ragged cells)
RAGGED = [
    [[0.7, 0.3], [0.1, 0.2, 0.7], [0.5, 0.5, 0.0, 0.0], [0.1, 0.1, 0.1, 0.7]],
    [[0.4, 0.6], [0.6, 0.3, 0.1], [0.2, 0.5, 0.3, 0.0], [0.4, 0.3, 0.2, 0.1]],
    [[0.5, 0.5], [0.3, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 0.0, 1.0]],
]
# argmax == gold; ties go to the first maximum (np.argmax, as the released code)
CORRECT = np.array([[1, 1, 0, 1], [0, 0, 1, 0], [1, 1, 0, 1]], dtype=float)
P_CORRECT = np.array([[0.7, 0.7, 0.5, 0.7], [0.4, 0.1, 0.5, 0.1], [0.5, 0.4, 0.25, 1.0]])


def _object_array(rows):
    arr = np.empty((len(rows), len(rows[0])), dtype=object)
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            arr[i, j] = np.asarray(cell, dtype=np.float32)
    return arr


def _catalog(tmp_path, **extra):
    entry = {
        "title": "ARC-like",
        "suite": "TB",
        "kind": "item_binary",
        "source": "tb",
        "format": "npy_options",
        "files": {
            "source": {"path": "BenchmarkDatasets/arc/source_model_alldata.npy", "sha256": None},
            "target": {"path": "BenchmarkDatasets/arc/target_model_alldata.npy", "sha256": None},
            "labels": {"path": "BenchmarkDatasets/arc/gt_label.npy", "sha256": None},
        },
        "min_accuracy": -1,
        **extra,
    }
    doc = {
        "sources": {"tb": {"repository": "marvelcell/TailoredBench", "commit": "e" * 40}},
        "url_template": "https://raw.githubusercontent.com/{repository}/{commit}/{path}",
        "datasets": {"arc": entry},
    }
    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump(doc))
    return load_catalog(tmp_path / "catalog.yaml")["arc"]


def _write(tmp_path, source, target, labels=LABELS):
    d = tmp_path / "raw" / "tb" / "BenchmarkDatasets" / "arc"
    d.mkdir(parents=True, exist_ok=True)
    np.save(d / "source_model_alldata.npy", source, allow_pickle=True)
    np.save(d / "target_model_alldata.npy", target, allow_pickle=True)
    np.save(d / "gt_label.npy", labels)
    return tmp_path / "raw", d


def _quiet(*_):
    pass


def test_ragged_option_dump_scores_by_argmax_and_keeps_the_gold_probability(tmp_path):
    objects = _object_array(RAGGED)
    raw, _ = _write(tmp_path, objects[:2], objects[2:])
    tables = build_tables(_catalog(tmp_path), raw, log=_quiet)
    resp = tables["responses"]
    np.testing.assert_array_equal(resp["score"].to_numpy().reshape(3, 4), CORRECT)
    np.testing.assert_allclose(resp["p_correct"].to_numpy().reshape(3, 4), P_CORRECT, rtol=1e-6)
    assert tables["models"]["file_role"].tolist() == ["source", "source", "target"]
    np.testing.assert_allclose(tables["models"]["accuracy"], CORRECT.mean(axis=1))

    out = {k: tmp_path / "tables" / f"{k}.parquet" for k in ("responses", "models", "items")}
    write_tables(tables, out)
    back = load_response_matrix(tmp_path / "tables", min_accuracy=None)
    np.testing.assert_array_equal(back.scores, CORRECT)


def test_rectangular_dump_gives_the_same_scores_and_max_items_truncates(tmp_path):
    dense = np.zeros((3, 4, 4))
    for i, row in enumerate(RAGGED):
        for j, cell in enumerate(row):
            dense[i, j, : len(cell)] = cell
    raw, _ = _write(tmp_path, dense[:1], dense[1:])
    tables = build_tables(_catalog(tmp_path), raw, log=_quiet)
    np.testing.assert_array_equal(tables["responses"]["score"].to_numpy().reshape(3, 4), CORRECT)
    np.testing.assert_allclose(tables["responses"]["p_correct"].to_numpy().reshape(3, 4), P_CORRECT)
    short = build_tables(_catalog(tmp_path, max_items=3), raw, log=_quiet)
    assert len(short["items"]) == 3
    np.testing.assert_array_equal(short["responses"]["score"].to_numpy().reshape(3, 3), CORRECT[:, :3])


def test_gold_label_outside_the_options_names_the_file_and_cell(tmp_path):
    objects = _object_array(RAGGED)
    raw, d = _write(tmp_path, objects[:2], objects[2:], labels=np.array([2, 2, 1, 3]))
    with pytest.raises(DataError) as info:
        build_tables(_catalog(tmp_path), raw, log=_quiet)
    assert info.value.field == "[0, 0]" and str(d / "source_model_alldata.npy") in str(info.value)
    assert "gold option is 2" in str(info.value)

    raw, d = _write(tmp_path, objects[:2], objects[2:], labels=LABELS[:3])
    with pytest.raises(DataError, match="3 gold labels for 4 questions"):
        build_tables(_catalog(tmp_path), raw, log=_quiet)


def test_values_that_are_not_probabilities_are_refused(tmp_path):
    logits = _object_array([[[2.0, -1.0], [0.1, 0.2, 0.7], [0.5, 0.5, 0.0, 0.0], [0.1, 0.1, 0.1, 0.7]]])
    raw, d = _write(tmp_path, logits, _object_array(RAGGED[:1]))
    with pytest.raises(DataError) as info:
        build_tables(_catalog(tmp_path), raw, log=_quiet)
    assert info.value.field == "[0, 0]" and "not a probability" in str(info.value)


class _Payload:
    def __reduce__(self):
        return (os.system, ("echo never-run",))


def test_an_object_npy_that_names_a_callable_is_refused_before_it_runs(tmp_path):
    evil = np.empty((1, 1), dtype=object)
    evil[0, 0] = _Payload()
    path = tmp_path / "evil.npy"
    np.save(path, evil, allow_pickle=True)
    with pytest.raises(UnsafePickleError) as info:
        safe_load_npy(path)
    assert "system" in str(info.value)

    strings = np.empty((1, 1), dtype=object)
    strings[0, 0] = "not numbers"
    np.save(path, strings, allow_pickle=True)
    with pytest.raises(UnsafePickleError, match=r"cell \[0, 0\]"):
        safe_load_npy(path)


def test_safe_load_npy_reads_numeric_npy_and_numpy_scalars(tmp_path):
    path = tmp_path / "plain.npy"
    np.save(path, LABELS)
    np.testing.assert_array_equal(safe_load_npy(path), LABELS)
    scalars = np.empty(2, dtype=object)
    scalars[0], scalars[1] = np.float64(0.25), np.int64(3)
    np.save(path, scalars, allow_pickle=True)
    back = safe_load_npy(path)
    assert back.dtype == object and back[0] == 0.25 and back[1] == 3
    path.write_bytes(b"not an npy file")
    with pytest.raises(UnsafePickleError, match="not a .npy file"):
        safe_load_npy(path)


def test_catalog_names_arc_and_hellaswag_at_their_public_paths():
    cat = load_catalog(DEFAULT_CATALOG)
    for name, n_items in (("tailoredbench_arc_challenge", 1172), ("tailoredbench_hellaswag", 6000)):
        spec = cat[name]
        assert spec.format == "npy_options" and not spec.mirrored and spec.n_items == n_items
        assert set(spec.files) == {"source", "target", "labels"}
        assert spec.url("labels", cat.url_template).startswith(
            "https://raw.githubusercontent.com/marvelcell/TailoredBench/e33061ea6e20ffe7736f2ecd68cf5728e0f27b15/"
        )
    assert cat["tailoredbench_hellaswag"].extra["max_items"] == 6000
