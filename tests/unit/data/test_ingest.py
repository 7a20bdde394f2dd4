"""Tests for item-level ingest: catalog -> raw dumps -> validated tables -> Parquet -> dense matrix.

A tiny fake mirror is laid out under tmp_path exactly like ``<raw_dir>/<source>/<path>``
of the real one, with a catalog YAML of the same structure as ``src/benchcast/data/catalog.yaml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
import yaml

from benchcast.data.catalog import load_catalog
from benchcast.data.item_level import (
    build_tables,
    iter_item_datasets,
    load_response_matrix,
    write_parquet_atomic,
    write_tables,
)
from benchcast.errors import ConfigError, DataError

SOURCE = "benchmark-prediction"

# 4 models x 5 items; model 1 is all-zero (excluded by min_accuracy).
TOY = np.array([[1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [0, 1, 0, 0, 1]], dtype=np.float64)
TOY_NAMES = ["alpha", "beta", "gamma", "delta"]


def _entry(scores_path, models=None, **kw):
    files = {"scores": {"path": scores_path, "sha256": None}}
    if models is not None:
        files["models"] = models
    d = {
        "title": kw.pop("title", "Toy"),
        "suite": "Toy-Suite",
        "kind": "item_binary",
        "source": SOURCE,
        "format": "jbl",
        "files": files,
        "n_models": None,
        "n_items": None,
        "mirrored": True,
        "duplicate_model_names": "error",
        "min_accuracy": 1.0e-08,
        "note": "test entry",
    }
    d.update(kw)
    return d


def base_catalog() -> dict:
    """Same structure as src/benchcast/data/catalog.yaml (sources, url_template, datasets)."""
    return {
        "sources": {
            SOURCE: {"repository": "socialfoundations/benchmark-prediction", "commit": "0" * 40, "license": "MIT"},
            "benchpress": {"repository": "microsoft/benchpress", "commit": "1" * 40, "license": "MIT"},
        },
        "url_template": "https://raw.githubusercontent.com/{repository}/{commit}/{path}",
        "datasets": {
            "toy": _entry(
                "data/scores/toy.jbl",
                {"path": "data/scores/toy_models.jbl", "sha256": None, "format": "jbl"},
                n_models=4,
                n_items=5,
            ),
            "helmy": _entry("data/scores/helmy.jbl", {"path": "helm_lite_models.txt", "sha256": None, "format": "txt"}),
            "anon": _entry("data/scores/anon.jbl"),
            "sub": _entry(
                "data/scores/sub.jbl", subtasks=[{"name": "first", "size": 5}, {"name": "second", "size": 7}]
            ),
            "badsub": _entry(
                "data/scores/badsub.jbl", subtasks=[{"name": "first", "size": 5}, {"name": "second", "size": 6}]
            ),
            "dups": _entry(
                "data/scores/dups.jbl", {"path": "data/scores/dups_models.jbl", "sha256": None, "format": "jbl"}
            ),
            "dups_suffix": _entry(
                "data/scores/dups.jbl",
                {"path": "data/scores/dups_models.jbl", "sha256": None, "format": "jbl"},
                duplicate_model_names="suffix",
            ),
            "agg": {
                "title": "Agg",
                "suite": "Agg",
                "kind": "aggregate",
                "source": "benchpress",
                "format": "benchpress_json",
                "files": {"scores": {"path": "website/data.json", "sha256": None}},
                "n_models": 3,
                "n_items": 2,
                "mirrored": True,
            },
        },
    }


def write_catalog(tmp_path: Path, doc: dict | None = None) -> Path:
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump(doc if doc is not None else base_catalog(), sort_keys=False))
    return path


def raw_path(raw: Path, rel: str) -> Path:
    p = raw / SOURCE / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


@pytest.fixture()
def mirror(tmp_path):
    raw = tmp_path / "raw"
    joblib.dump(TOY, raw_path(raw, "data/scores/toy.jbl"))
    joblib.dump(list(TOY_NAMES), raw_path(raw, "data/scores/toy_models.jbl"))
    joblib.dump(TOY[[0, 2, 3]], raw_path(raw, "data/scores/helmy.jbl"))
    raw_path(raw, "helm_lite_models.txt").write_text("helm/one\n  helm/two  \n\nhelm/three\n")
    rng = np.random.default_rng(0)
    big = (rng.random((11, 12)) < 0.5).astype(np.float64)
    big[3] = 0.0
    joblib.dump(big, raw_path(raw, "data/scores/anon.jbl"))
    joblib.dump(big, raw_path(raw, "data/scores/sub.jbl"))
    joblib.dump(big, raw_path(raw, "data/scores/badsub.jbl"))
    joblib.dump(TOY, raw_path(raw, "data/scores/dups.jbl"))
    joblib.dump(["m", "x", "m", "m"], raw_path(raw, "data/scores/dups_models.jbl"))
    cat = load_catalog(write_catalog(tmp_path))
    return raw, cat, big


def _quiet(_msg):
    pass


# --------------------------------------------------------------------------- catalog


def test_load_catalog_fields(mirror, tmp_path):
    raw, cat, _ = mirror
    spec = cat["toy"]
    assert spec.kind == "item_binary" and spec.format == "jbl"
    assert spec.repository == "socialfoundations/benchmark-prediction"
    assert spec.files["models"].format == "jbl"
    assert spec.n_models == 4 and spec.n_items == 5
    assert spec.local_path(raw, "scores") == raw / SOURCE / "data/scores/toy.jbl"
    assert cat["sub"].subtasks == (("first", 5), ("second", 7))
    assert cat["dups_suffix"].duplicate_model_names == "suffix"
    assert set(cat.names("item_binary")) == {"toy", "helmy", "anon", "sub", "badsub", "dups", "dups_suffix"}
    assert cat.names("aggregate") == ["agg"]
    assert spec.url("scores", cat.url_template) == (
        "https://raw.githubusercontent.com/socialfoundations/benchmark-prediction/" + "0" * 40 + "/data/scores/toy.jbl"
    )


def test_unknown_dataset_lists_known_names(mirror):
    _, cat, _ = mirror
    with pytest.raises(ConfigError) as info:
        cat["nope"]
    msg = str(info.value)
    assert "nope" in msg
    for name in ("toy", "helmy", "anon", "sub", "agg"):
        assert name in msg
    assert cat.path in msg


def test_catalog_unknown_source_is_config_error(tmp_path):
    doc = base_catalog()
    doc["datasets"]["toy"]["source"] = "nowhere"
    with pytest.raises(ConfigError, match="nowhere"):
        load_catalog(write_catalog(tmp_path, doc))


def test_iter_item_datasets_rejects_aggregate(mirror):
    _, cat, _ = mirror
    specs = iter_item_datasets(["toy", "anon"], cat)
    assert [s.name for s in specs] == ["toy", "anon"]
    with pytest.raises(DataError) as info:
        iter_item_datasets(["toy", "agg"], cat)
    err = info.value
    assert err.path == cat.path
    assert err.field == "datasets.agg.kind"
    assert cat.path in str(err) and "aggregate" in str(err)
    with pytest.raises(ConfigError):
        iter_item_datasets(["toy", "missing"], cat)


# --------------------------------------------------------------------------- build_tables


def test_build_tables_known_answer(mirror):
    raw, cat, _ = mirror
    logs: list[str] = []
    t = build_tables(cat["toy"], raw, log=logs.append)
    assert set(t) == {"responses", "models", "items"}

    expected_resp = pd.DataFrame(
        {
            "model_idx": np.array([0] * 5 + [1] * 5 + [2] * 5 + [3] * 5, dtype=np.int32),
            "item_idx": np.array(list(range(5)) * 4, dtype=np.int32),
            "score": TOY.ravel().astype(np.float32),
        }
    )
    pd.testing.assert_frame_equal(t["responses"], expected_resp)

    expected_models = pd.DataFrame(
        {
            "model_idx": np.arange(4, dtype=np.int32),
            "model_id": TOY_NAMES,
            "name": TOY_NAMES,
            "accuracy": np.array([0.6, 0.0, 1.0, 0.4]),
            "excluded": np.array([False, True, False, False]),
            "exclusion_reason": ["", "accuracy <= 1e-08", "", ""],
        }
    )
    m = t["models"]
    # the documented columns first, in order (later columns are optional metadata)
    assert list(m.columns[:6]) == list(expected_models.columns)
    assert m["model_idx"].dtype == np.int32 and m["excluded"].dtype == bool
    np.testing.assert_allclose(m["accuracy"].to_numpy(), expected_models["accuracy"].to_numpy(), rtol=0, atol=1e-15)
    assert m["model_id"].tolist() == TOY_NAMES and m["name"].tolist() == TOY_NAMES
    assert m["excluded"].tolist() == [False, True, False, False]
    assert m["exclusion_reason"].tolist() == ["", "accuracy <= 1e-08", "", ""]
    assert m["file_role"].tolist() == ["scores"] * 4
    # names without an "org/" namespace have no organization
    assert m["organization"].isna().all()

    items = t["items"]
    assert list(items.columns) == ["item_idx", "item_id", "subtask", "subtask_position"]
    assert items["item_idx"].tolist() == [0, 1, 2, 3, 4] and items["item_idx"].dtype == np.int32
    assert items["item_id"].tolist() == ["toy/0", "toy/1", "toy/2", "toy/3", "toy/4"]
    assert items["subtask"].tolist() == ["toy"] * 5
    assert items["subtask_position"].tolist() == [0, 1, 2, 3, 4]
    assert items["subtask_position"].dtype == np.int32
    # catalog counts match the file: no warnings
    assert not [line for line in logs if "WARNING" in line]
    assert any("1 excluded" in line for line in logs)


def test_min_accuracy_threshold_flags_low_rows(mirror, tmp_path):
    raw, _, _ = mirror
    doc = base_catalog()
    doc["datasets"]["toy"]["min_accuracy"] = 0.5
    cat = load_catalog(write_catalog(tmp_path, doc))
    m = build_tables(cat["toy"], raw, log=_quiet)["models"]
    assert m["excluded"].tolist() == [False, True, False, True]  # acc 0.6, 0, 1, 0.4
    assert m["exclusion_reason"].tolist() == ["", "accuracy <= 0.5", "", "accuracy <= 0.5"]


def test_txt_model_list(mirror):
    raw, cat, _ = mirror
    t = build_tables(cat["helmy"], raw, log=_quiet)
    assert t["models"]["model_id"].tolist() == ["helm/one", "helm/two", "helm/three"]
    assert t["models"]["organization"].tolist() == ["helm", "helm", "helm"]
    np.testing.assert_allclose(t["models"]["accuracy"], [0.6, 1.0, 0.4])
    assert not t["models"]["excluded"].any()


def test_anonymous_models_and_catalog_count_warning(mirror, tmp_path):
    raw, _, big = mirror
    doc = base_catalog()
    doc["datasets"]["anon"]["n_models"] = 99
    cat = load_catalog(write_catalog(tmp_path, doc))
    logs: list[str] = []
    t = build_tables(cat["anon"], raw, log=logs.append)
    ids = [f"anon_model_{i:02d}" for i in range(11)]
    assert t["models"]["model_id"].tolist() == ids
    assert t["models"]["name"].tolist() == ids
    assert t["models"]["excluded"].tolist() == [i == 3 for i in range(11)]
    np.testing.assert_allclose(t["models"]["accuracy"], big.mean(axis=1))
    assert t["items"]["item_id"].tolist() == [f"anon/{j:02d}" for j in range(12)]
    assert any("WARNING" in line and "99" in line and "11" in line for line in logs)


def test_subtasks_recorded_when_sizes_sum_to_n(mirror):
    raw, cat, _ = mirror
    logs: list[str] = []
    items = build_tables(cat["sub"], raw, log=logs.append)["items"]
    assert items["subtask"].tolist() == ["first"] * 5 + ["second"] * 7
    assert items["subtask_position"].tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 6]
    assert items["item_id"].tolist() == [f"sub/{j:02d}" for j in range(12)]
    assert not [line for line in logs if "WARNING" in line]


def test_subtasks_not_recorded_when_sizes_do_not_sum(mirror):
    raw, cat, _ = mirror
    logs: list[str] = []
    items = build_tables(cat["badsub"], raw, log=logs.append)["items"]
    assert items["subtask"].tolist() == ["badsub"] * 12
    assert items["subtask_position"].tolist() == list(range(12))
    assert any("WARNING" in line and "subtask" in line for line in logs)


def test_duplicate_names_error_policy(mirror):
    raw, cat, _ = mirror
    with pytest.raises(DataError) as info:
        build_tables(cat["dups"], raw, log=_quiet)
    err = info.value
    models_path = raw / SOURCE / "data/scores/dups_models.jbl"
    assert err.path == str(models_path)
    assert err.field == "model names"
    assert str(models_path) in str(err) and "'m'" in str(err) and "suffix" in str(err)


def test_duplicate_names_suffix_policy(mirror):
    raw, cat, _ = mirror
    m = build_tables(cat["dups_suffix"], raw, log=_quiet)["models"]
    assert m["model_id"].tolist() == ["m", "x", "m#2", "m#3"]
    assert m["name"].tolist() == ["m", "x", "m", "m"]
    assert m["model_id"].is_unique


# --------------------------------------------------------------------------- bad input


def test_shape_mismatch_between_matrix_and_model_list(mirror):
    raw, cat, _ = mirror
    joblib.dump(TOY_NAMES[:3], raw / SOURCE / "data/scores/toy_models.jbl")
    with pytest.raises(DataError) as info:
        build_tables(cat["toy"], raw, log=_quiet)
    err = info.value
    scores_path = raw / SOURCE / "data/scores/toy.jbl"
    assert err.path == str(scores_path)
    assert err.field == "rows"
    msg = str(err)
    assert str(scores_path) in msg and "toy_models.jbl" in msg and "4" in msg and "3" in msg


def test_txt_model_list_length_mismatch(mirror):
    raw, cat, _ = mirror
    (raw / SOURCE / "helm_lite_models.txt").write_text("only/one\n")
    with pytest.raises(DataError) as info:
        build_tables(cat["helmy"], raw, log=_quiet)
    assert info.value.field == "rows"
    assert "helm_lite_models.txt" in str(info.value)


def test_nan_in_scores(mirror):
    raw, cat, _ = mirror
    bad = TOY.copy()
    bad[2, 3] = np.nan
    bad[3, 0] = np.nan
    p = raw / SOURCE / "data/scores/toy.jbl"
    joblib.dump(bad, p)
    with pytest.raises(DataError) as info:
        build_tables(cat["toy"], raw, log=_quiet)
    err = info.value
    assert err.path == str(p)
    assert err.field == "scores[2, 3]"
    assert str(p) in str(err) and "2 NaN" in str(err)


def test_inf_in_scores(mirror):
    raw, cat, _ = mirror
    bad = TOY.copy()
    bad[0, 4] = np.inf
    joblib.dump(bad, raw / SOURCE / "data/scores/toy.jbl")
    with pytest.raises(DataError) as info:
        build_tables(cat["toy"], raw, log=_quiet)
    assert info.value.field == "scores[0, 4]"


def test_non_binary_scores(mirror):
    raw, cat, _ = mirror
    bad = TOY.copy()
    bad[1, 2] = 0.5
    bad[3, 4] = 2.0
    p = raw / SOURCE / "data/scores/toy.jbl"
    joblib.dump(bad, p)
    with pytest.raises(DataError) as info:
        build_tables(cat["toy"], raw, log=_quiet)
    err = info.value
    assert err.path == str(p)
    assert err.field == "scores[1, 2]"
    assert "0.5" in str(err) and "2 such cells" in str(err) and str(p) in str(err)


@pytest.mark.parametrize(
    ("filename", "payload", "field"),
    [
        ("toy.jbl", TOY.ravel(), "scores"),  # scores not 2-D
        ("toy.jbl", ["not", "scores"], "scores"),  # scores file holding a list
        ("toy_models.jbl", np.arange(4.0), "model list"),  # model list holding an array
    ],
    ids=["scores_not_2d", "scores_file_holding_a_list", "model_list_holding_an_array"],
)
def test_wrong_object_in_raw_file(mirror, filename, payload, field):
    raw, cat, _ = mirror
    p = raw / SOURCE / "data/scores" / filename
    joblib.dump(payload, p)
    with pytest.raises(DataError) as info:
        build_tables(cat["toy"], raw, log=_quiet)
    assert info.value.path == str(p) and info.value.field == field


@pytest.mark.parametrize("role", ["scores", "models"])
def test_missing_file(mirror, role):
    raw, cat, _ = mirror
    rel = {"scores": "data/scores/toy.jbl", "models": "data/scores/toy_models.jbl"}[role]
    p = raw / SOURCE / rel
    p.unlink()
    with pytest.raises(DataError) as info:
        build_tables(cat["toy"], raw, log=_quiet)
    err = info.value
    assert err.path == str(p)
    assert err.field == f"files.{role}"
    msg = str(err)
    assert str(p) in msg and "raw_dir" in msg and "download" in msg
    assert "https://raw.githubusercontent.com/socialfoundations/benchmark-prediction/" in msg


def test_unsafe_scores_file_is_a_data_error(mirror):
    raw, cat, _ = mirror
    p = raw / SOURCE / "data/scores/toy.jbl"
    p.write_text("this is not a pickle\n")
    with pytest.raises(DataError) as info:
        build_tables(cat["toy"], raw, log=_quiet)
    assert str(p) in str(info.value)


# --------------------------------------------------------------------------- npy_pair


def test_npy_pair_stacks_source_then_target(tmp_path):
    doc = base_catalog()
    doc["sources"]["tb"] = {"repository": "x/tb", "commit": "2" * 40}
    doc["datasets"]["pair"] = {
        "title": "Pair",
        "suite": "TB",
        "kind": "item_binary",
        "source": "tb",
        "format": "npy_pair",
        "files": {"source": {"path": "s.npy", "sha256": None}, "target": {"path": "t.npy", "sha256": None}},
    }
    cat = load_catalog(write_catalog(tmp_path, doc))
    raw = tmp_path / "raw"
    (raw / "tb").mkdir(parents=True)
    np.save(raw / "tb" / "s.npy", TOY[:2])
    np.save(raw / "tb" / "t.npy", TOY[2:])
    t = build_tables(cat["pair"], raw, log=_quiet)
    np.testing.assert_array_equal(t["responses"]["score"].to_numpy().reshape(4, 5), TOY)
    assert t["models"]["model_id"].tolist() == ["pair_model_0", "pair_model_1", "pair_model_2", "pair_model_3"]
    assert t["models"]["file_role"].tolist() == ["source", "source", "target", "target"]
    np.save(raw / "tb" / "t.npy", np.ones((2, 6)))
    with pytest.raises(DataError) as info:
        build_tables(cat["pair"], raw, log=_quiet)
    assert info.value.field == "columns" and "t.npy" in str(info.value)


# --------------------------------------------------------------------------- parquet round trip


def _out(d: Path) -> dict[str, Path]:
    return {k: d / f"{k}.parquet" for k in ("responses", "models", "items")}


def test_write_load_round_trip(mirror, tmp_path):
    raw, cat, big = mirror
    tables = build_tables(cat["sub"], raw, log=_quiet)
    d = tmp_path / "tables" / "sub"
    write_tables(tables, _out(d))
    for name, df in tables.items():
        back = pd.read_parquet(d / f"{name}.parquet")
        assert list(back.columns) == list(df.columns)
        for col in df.columns:
            if df[col].dtype == object:  # missing values come back as None
                assert (
                    back[col].where(back[col].notna(), None).tolist() == df[col].where(df[col].notna(), None).tolist()
                ), col
            else:
                assert back[col].dtype == df[col].dtype, col
                np.testing.assert_array_equal(back[col].to_numpy(), df[col].to_numpy())

    full = load_response_matrix(d, include_excluded=True)
    assert full.dataset == "sub"
    np.testing.assert_array_equal(full.scores, big)
    assert full.scores.dtype == np.float64
    assert full.model_ids == [f"sub_model_{i:02d}" for i in range(11)]
    assert full.item_ids == [f"sub/{j:02d}" for j in range(12)]
    assert full.subtasks == ["first"] * 5 + ["second"] * 7
    assert full.shape == (11, 12)
    np.testing.assert_allclose(full.accuracy(), big.mean(axis=1))

    kept = load_response_matrix(d, dataset="renamed")
    keep = np.arange(11) != 3
    assert kept.dataset == "renamed"
    np.testing.assert_array_equal(kept.scores, big[keep])
    assert kept.model_ids == [f"sub_model_{i:02d}" for i in range(11) if i != 3]
    assert kept.model_names == kept.model_ids
    assert kept.file_roles == ["scores"] * 10

    # a study's own minimum accuracy overrides the catalog's flag: None keeps every model
    assert load_response_matrix(d, min_accuracy=None).shape == (11, 12)
    high = load_response_matrix(d, min_accuracy=0.5)
    np.testing.assert_array_equal(high.scores, big[big.mean(axis=1) > 0.5])


def test_load_response_matrix_row_count_mismatch(mirror, tmp_path):
    raw, cat, _ = mirror
    tables = build_tables(cat["toy"], raw, log=_quiet)
    tables["responses"] = tables["responses"].iloc[:-1]
    d = tmp_path / "t"
    write_tables(tables, _out(d))
    with pytest.raises(DataError) as info:
        load_response_matrix(d)
    assert str(d / "responses.parquet") in str(info.value)
    assert info.value.field == "rows"


def test_parquet_is_byte_identical_when_written_twice(mirror, tmp_path):
    raw, cat, _ = mirror
    a, b = tmp_path / "a", tmp_path / "b"
    write_tables(build_tables(cat["toy"], raw, log=_quiet), _out(a))
    write_tables(build_tables(cat["toy"], raw, log=_quiet), _out(b))
    for name in ("responses", "models", "items"):
        assert (a / f"{name}.parquet").read_bytes() == (b / f"{name}.parquet").read_bytes()
    first = (a / "models.parquet").read_bytes()
    write_tables(build_tables(cat["toy"], raw, log=_quiet), _out(a))  # overwrite in place
    assert (a / "models.parquet").read_bytes() == first
    assert sorted(p.name for p in a.iterdir()) == ["items.parquet", "models.parquet", "responses.parquet"]


def test_write_parquet_atomic_failure_keeps_old_file(tmp_path, monkeypatch):
    target = tmp_path / "out" / "models.parquet"
    old = pd.DataFrame({"a": [1, 2, 3]})
    write_parquet_atomic(old, target)
    old_bytes = target.read_bytes()
    assert sorted(p.name for p in target.parent.iterdir()) == ["models.parquet"]

    calls = []

    def boom(table, where, **kw):
        calls.append(where)
        Path(where).write_bytes(b"partial garbage")  # a half-written temp file
        raise OSError("disk full")

    monkeypatch.setattr(sys.modules[write_parquet_atomic.__module__].pq, "write_table", boom)
    with pytest.raises(OSError, match="disk full"):
        write_parquet_atomic(pd.DataFrame({"a": [9]}), target)
    assert len(calls) == 1
    assert Path(calls[0]) != target and Path(calls[0]).parent == target.parent
    assert target.read_bytes() == old_bytes
    assert sorted(p.name for p in target.parent.iterdir()) == ["models.parquet"], "temp file left behind"
    monkeypatch.undo()
    pd.testing.assert_frame_equal(pd.read_parquet(target), old)


def test_write_parquet_atomic_failure_without_old_file(tmp_path, monkeypatch):
    target = tmp_path / "new" / "x.parquet"

    def boom(table, where, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(sys.modules[write_parquet_atomic.__module__].pq, "write_table", boom)
    with pytest.raises(KeyboardInterrupt):
        write_parquet_atomic(pd.DataFrame({"a": [1]}), target)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_write_parquet_atomic_has_no_pandas_metadata(tmp_path):
    import pyarrow.parquet as pq

    p = tmp_path / "x.parquet"
    write_parquet_atomic(pd.DataFrame({"a": [1, 2]}, index=[5, 6]), p)
    schema = pq.read_schema(p)
    assert not (schema.metadata or {}).get(b"pandas")
    back = pd.read_parquet(p)
    assert back.index.tolist() == [0, 1]  # index not preserved
    assert back["a"].tolist() == [1, 2]


def test_duplicate_suffix_never_collides_with_an_existing_name(mirror):
    raw, cat, _ = mirror
    joblib.dump(["m", "m#2", "m", "x"], raw / SOURCE / "data/scores/dups_models.jbl")
    m = build_tables(cat["dups_suffix"], raw, log=_quiet)["models"]
    assert m["model_id"].is_unique
    assert m["name"].tolist() == ["m", "m#2", "m", "x"]


def test_write_parquet_atomic_output_is_readable(tmp_path):
    # the temp file comes from mkstemp (mode 0600); the published file should still be
    # readable by the group/others like any file the workflow writes (umask 022 -> 0644)
    import os
    import stat

    old = os.umask(0o022)
    try:
        p = tmp_path / "perm.parquet"
        write_parquet_atomic(pd.DataFrame({"a": [1]}), p)
    finally:
        os.umask(old)
    mode = stat.S_IMODE(p.stat().st_mode)
    assert mode & 0o044 == 0o044, oct(mode)
