"""`benchcast fetch`: one item-level dataset from a mirror or a download to the tables `select`
reads, without Snakemake (issue 37, item 8); and where the command line keeps datasets and fits
by default. On a small catalog and files written here; downloads through file:// URLs."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from benchcast.cli import main
from benchcast.cli.common import default_data_dir
from benchcast.data.catalog import DEFAULT_CATALOG, load_catalog
from benchcast.data.fetch import fetch_dataset
from benchcast.data.item_level import build_tables, load_response_matrix, write_tables
from benchcast.errors import ConfigError, DataError

SCORES = "data/board.csv"


def board_csv(seed=0, models=12, items=30) -> str:
    rng = np.random.default_rng(seed)
    scores = (rng.random((models, items)) < np.linspace(0.2, 0.9, models)[:, None]).astype(int)
    frame = pd.DataFrame(scores, columns=[f"q{j}" for j in range(items)])
    frame.insert(0, "model", [f"org/m{i}" for i in range(models)])
    return frame.to_csv(index=False)


@pytest.fixture
def lab(tmp_path):
    """A mirror holding one dataset's raw file, and a catalog pinning its sha256."""
    text = board_csv()
    raw = tmp_path / "mirror" / "src" / SCORES
    raw.parent.mkdir(parents=True)
    raw.write_text(text)
    entry = {
        "title": "Toy board",
        "suite": "t",
        "kind": "item_binary",
        "source": "src",
        "format": "csv_matrix",
        "orientation": "models_by_items",
        "files": {"scores": {"path": SCORES, "sha256": hashlib.sha256(text.encode()).hexdigest()}},
        "min_accuracy": 0.0,
    }
    aggregate = {
        "title": "Agg",
        "suite": "t",
        "kind": "aggregate",
        "source": "src",
        "format": "benchpress_json",
        "files": {"scores": {"path": "x.json", "sha256": None}},
    }
    doc = {
        "sources": {"src": {"repository": "o/r", "commit": "a" * 40}},
        "url_template": "https://example.invalid/{repository}/{commit}/{path}",
        "datasets": {"toyboard": entry, "agg": aggregate},
    }
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(yaml.safe_dump(doc))
    return tmp_path / "mirror", catalog


def everything(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} if folder.exists() else set()


def test_fetch_from_a_mirror_writes_the_workflows_ingest_tables(lab, tmp_path):
    mirror, catalog_path = lab
    catalog = load_catalog(catalog_path)
    out = fetch_dataset(catalog, "toyboard", tmp_path / "data", raw_dir=mirror, log=lambda s: None)
    assert out == tmp_path / "data" / "data" / "toyboard"
    spec = catalog["toyboard"]
    ingest = tmp_path / "ingest"  # what the workflow's ingest job writes from the same file
    tables = build_tables(spec, {"scores": mirror / "src" / SCORES}, log=lambda s: None)
    write_tables(tables, {name: ingest / f"{name}.parquet" for name in tables})
    for name in ("responses", "models", "items"):
        assert (out / f"{name}.parquet").read_bytes() == (ingest / f"{name}.parquet").read_bytes()
    assert load_response_matrix(out).scores.shape == (12, 30)
    assert not (tmp_path / "data" / "raw").exists()  # a mirror is read in place


def test_fetch_downloads_verifies_and_keeps_the_raw_file(lab, tmp_path):
    mirror, catalog_path = lab
    template = f"file://{mirror}/src/{{path}}"  # a copy you can reach: the download code path, no network
    said = []
    fetch_dataset(load_catalog(catalog_path), "toyboard", tmp_path / "d", url_template=template, log=said.append)
    assert (tmp_path / "d" / "raw" / "src" / SCORES).read_bytes() == (mirror / "src" / SCORES).read_bytes()
    assert any(line.startswith("downloaded file://") for line in said)
    assert any("sha256 verified for 1 raw file" in line for line in said)


def test_a_changed_file_is_refused_and_nothing_is_left(lab, tmp_path):
    mirror, catalog_path = lab
    (mirror / "src" / SCORES).write_text(board_csv(seed=1))
    template = f"file://{mirror}/src/{{path}}"
    with pytest.raises(DataError, match="checksum mismatch"):
        fetch_dataset(load_catalog(catalog_path), "toyboard", tmp_path / "d", url_template=template, log=print)
    assert [p for p in everything(tmp_path / "d") if not (tmp_path / "d" / p).is_dir()] == []
    with pytest.raises(DataError, match="checksum mismatch"):  # the same from a mirror
        fetch_dataset(load_catalog(catalog_path), "toyboard", tmp_path / "m", raw_dir=mirror, log=print)
    assert not (tmp_path / "m" / "data").exists()


def test_offline_or_unreachable_the_error_names_the_url_and_the_two_fixes(lab, tmp_path):
    _, catalog_path = lab
    with pytest.raises(DataError) as err:
        fetch_dataset(load_catalog(catalog_path), "toyboard", tmp_path / "d", url_template="file:///nowhere/{path}")
    text = str(err.value)
    assert "could not download file:///nowhere/data/board.csv" in text
    assert "--raw-dir" in text and "--url-template" in text and "\n" not in text
    assert [p for p in everything(tmp_path / "d") if not (tmp_path / "d" / p).is_dir()] == []


def test_fetch_takes_item_level_datasets_only(lab, tmp_path):
    mirror, catalog_path = lab
    with pytest.raises(ConfigError, match="'agg' is of kind aggregate; benchcast fetch takes the item-level"):
        fetch_dataset(load_catalog(catalog_path), "agg", tmp_path, raw_dir=mirror)


def test_the_command_line_fetches_once_and_says_what_is_next(lab, tmp_path, capsys):
    mirror, catalog = lab
    argv = ["fetch", "toyboard", "--catalog", str(catalog), "--raw-dir", str(mirror), "--data-dir", str(tmp_path / "d")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"toyboard: 12 models x 30 items in {tmp_path / 'd' / 'data' / 'toyboard'}. Next:")
    assert (
        f"benchcast select toyboard --method random_sampling --budget 50 --out items.csv --data-dir {tmp_path / 'd'}"
        in out
    )
    assert main(argv) == 0
    assert "already in" in capsys.readouterr().out
    assert main([*argv, "--force"]) == 0
    assert main(["fetch", "toybord", "--catalog", str(catalog)]) == 2  # a usage error
    assert "did you mean 'toyboard'" in capsys.readouterr().err


def test_the_default_data_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BENCHCAST_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_data_dir() == str(tmp_path / "cache" / "benchcast")  # the platform's per-user cache
    (tmp_path / "results" / "data").mkdir(parents=True)
    assert default_data_dir() == "results"  # a clone that ran the workflow
    monkeypatch.setenv("BENCHCAST_DATA_DIR", "/srv/benchcast")
    assert default_data_dir() == "/srv/benchcast"


def test_the_shipped_catalog_is_package_data_with_the_item_level_datasets():
    assert DEFAULT_CATALOG.name == "catalog.yaml" and DEFAULT_CATALOG.parent.name == "data"
    names = load_catalog(DEFAULT_CATALOG).names("item_binary")
    assert {"musr", "gsm", "ifeval", "arc_challenge"} <= set(names)
    assert os.path.isfile(DEFAULT_CATALOG)
