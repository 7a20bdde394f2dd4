"""The BenchPress benchmark inventory (paper Table 9): the repository file, its join onto the
aggregate tables, the shared scale rule, and the catalog's ``source: repo`` files.

Tests that need the raw mirror (``../shared/raw`` next to the repository, the default
``raw_dir`` of config/config.yaml) skip when it is absent; everything else runs on the
repository file or on small tables built here.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import REPO

from benchcast.data.aggregate import (
    INVENTORY_COLUMNS,
    SCALES,
    AggregateTables,
    attach_benchmark_inventory,
    infer_lower_is_better,
    infer_scale,
    read_benchmark_inventory,
    read_llm_benchmark_matrix,
    with_inferred_scales,
)
from benchcast.data.aggregate_ingest import read_aggregate
from benchcast.data.catalog import load_catalog
from benchcast.errors import ConfigError, DataError

RAW = REPO.parent / "shared" / "raw"  # config/config.yaml: raw_dir ../shared/raw
INVENTORY = REPO / "resources" / "paper" / "benchpress_benchmark_inventory.csv"
DATA_JSON = RAW / "benchpress" / "website" / "data.json"
LLM_MATRIX = RAW / "llm-benchmark-matrix" / "data" / "llm_benchmark_data.json"
PAPER = REPO.parent / "shared" / "papers" / "benchpress-you-dont-need-to-run-every-eval.txt"

# Table 9 headings, "Agentic & tool use (26)" etc.
PAPER_COUNTS = {
    "Agentic & tool use": 26,
    "Math": 23,
    "Coding": 21,
    "Multimodal & vision": 12,
    "Long context": 9,
    "Instruction following": 9,
    "Knowledge & QA": 9,
    "Reasoning": 8,
    "Hallucination & factuality": 5,
    "Science": 4,
    "Other": 7,
}
NON_PERCENT = {
    "aa_intelligence_index": "index",
    "chatbot_arena_elo": "elo",
    "codeforces_rating": "rating",
    "gdpval_aa_elo": "elo",
    "omnidocbench": "edit_distance",
    "omnidocbench_1.5": "edit_distance",
    "swelancer_freelance_dollars": "dollars",
    "vending_bench_2": "dollars",
}
LOWER_IS_BETTER = {"omnidocbench", "omnidocbench_1.5", "factscore", "longfact_concepts", "longfact_objects"}
# Where the hand-checked inventory knows more than the generic rule: Vending-Bench 2's
# metric is "—" in Table 9, but its scores are a dollar net worth (data.json provenance notes).
RULE_EXCEPTIONS = {"vending_bench_2": ("score", "dollars")}

needs_raw = pytest.mark.skipif(not DATA_JSON.exists(), reason=f"raw mirror not found at {RAW}")


def _inventory_rows() -> list[dict]:
    with open(INVENTORY, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _data_json() -> dict:
    return json.loads(DATA_JSON.read_text(encoding="utf-8"))


def _column_ranges(doc: dict) -> dict[str, tuple[float | None, float | None]]:
    out = {}
    for j, b in enumerate(doc["benchmarks"]):
        col = [row[j] for row in doc["observed"] if row[j] is not None]
        out[b["id"]] = (min(col), max(col)) if col else (None, None)
    return out


# --------------------------------------------------------------------------- the repository file


def test_inventory_file_schema():
    rows = _inventory_rows()
    with open(INVENTORY, encoding="utf-8") as fh:
        assert fh.readline().strip() == ",".join(INVENTORY_COLUMNS)
    assert len(rows) == 133
    ids = [r["benchmark_id"] for r in rows]
    assert len(set(ids)) == 133
    for r in rows:
        assert r["scale"] in SCALES
        assert r["is_percentage"] == ("true" if r["scale"] == "percent" else "false")
        assert r["lower_is_better"] in ("true", "false")
        assert r["items"] == "" or re.fullmatch(r"[1-9]\d*", r["items"])
        assert r["metric"] != "—" and r["link"].startswith("https://")
    inv = read_benchmark_inventory(INVENTORY)  # the validating reader accepts it
    assert inv["benchmark_id"].tolist() == ids


def test_category_counts_match_paper_headings():
    counts = Counter(r["category"] for r in _inventory_rows())
    assert dict(counts) == PAPER_COUNTS and sum(PAPER_COUNTS.values()) == 133
    if PAPER.exists():  # the headings as printed in the paper text
        line = next(ln for ln in PAPER.read_text(encoding="utf-8").splitlines() if ln.startswith("Table 9:"))
        table = line.split("Table 10:")[0]
        found = {h: int(re.search(re.escape(h) + r" \\\((\d+)\\\)", table).group(1)) for h in PAPER_COUNTS}
        assert found == PAPER_COUNTS


def test_non_percentage_columns_and_direction_flags():
    rows = {r["benchmark_id"]: r for r in _inventory_rows()}
    assert {b: r["scale"] for b, r in rows.items() if r["scale"] != "percent"} == NON_PERCENT
    assert {b for b, r in rows.items() if r["is_percentage"] == "false"} == set(NON_PERCENT)
    assert {b for b, r in rows.items() if r["lower_is_better"] == "true"} == LOWER_IS_BETTER
    # spot checks of the Table 9 transcription
    assert rows["frontiermath"]["metric"] == "% correct T1-3" and rows["frontiermath"]["items"] == "300"
    assert rows["usamo_2025"]["metric"] == "% of 42 points" and rows["usamo_2025"]["items"] == "6"
    assert rows["bfcl"]["metric"] == "" and rows["bfcl"]["items"] == ""
    assert rows["mmmlu"]["items"] == "258090"
    assert rows["tau2_bench_airline"]["name"] == "τ²-bench Airline"


@needs_raw
def test_inventory_maps_every_data_json_benchmark_once():
    doc = _data_json()
    rows = _inventory_rows()
    assert [r["benchmark_id"] for r in rows] == [b["id"] for b in doc["benchmarks"]]  # all 133, data.json order
    assert [r["name"] for r in rows] == [b["name"] for b in doc["benchmarks"]]


@needs_raw
def test_observed_ranges_agree_with_scales():
    rows = {r["benchmark_id"]: r for r in _inventory_rows()}
    ranges = _column_ranges(_data_json())
    over_100 = {b for b, (lo, hi) in ranges.items() if hi is not None and hi > 100}
    assert over_100 == {
        "chatbot_arena_elo",
        "codeforces_rating",
        "gdpval_aa_elo",
        "swelancer_freelance_dollars",
        "vending_bench_2",
    }
    for b, (lo, hi) in ranges.items():
        if rows[b]["scale"] == "percent":
            assert lo is not None and 0 <= lo and hi <= 100, b
    assert ranges["omnidocbench"][1] < 1  # pure edit distance
    assert ranges["omnidocbench_1.5"][1] > 1  # 2 of 11 values are (1 - edit distance) x 100: see the .md


@needs_raw
def test_shared_rule_agrees_with_inventory():
    rows = {r["benchmark_id"]: r for r in _inventory_rows()}
    ranges = _column_ranges(_data_json())
    disagree = {}
    for b, r in rows.items():
        lo, hi = ranges[b]
        scale = infer_scale(r["metric"], lo, hi, name=r["name"])
        if scale != r["scale"]:
            disagree[b] = (scale, r["scale"])
        assert infer_lower_is_better(r["metric"], name=r["name"], scale=r["scale"]) == (r["lower_is_better"] == "true")
    assert disagree == RULE_EXCEPTIONS


@needs_raw
def test_read_aggregate_attaches_inventory_to_real_benchpress():
    cat = load_catalog(REPO / "src" / "benchcast" / "data" / "catalog.yaml")
    spec = cat["benchpress"]
    assert spec.files["inventory"].in_repo and cat.repo_root == REPO
    assert cat.local_path("benchpress", "inventory", RAW) == INVENTORY
    t = read_aggregate(spec, RAW, repo_dir=cat.repo_root)
    b = t.benchmarks
    assert b.columns.tolist()[:8] == [
        "benchmark_id",
        "name",
        "category",
        "metric",
        "scale",
        "is_percentage",
        "lower_is_better",
        "items",
    ]
    assert b["category"].notna().all() and len(b) == 133
    assert str(b["is_percentage"].dtype) == "boolean" and str(b["lower_is_better"].dtype) == "boolean"
    assert str(b["items"].dtype) == "Int64"
    assert (~b["is_percentage"]).sum() == len(NON_PERCENT)
    assert b["metric"].isna().sum() == sum(1 for r in _inventory_rows() if r["metric"] == "")


@pytest.mark.skipif(not LLM_MATRIX.exists(), reason=f"raw mirror not found at {RAW}")
def test_llm_benchmark_matrix_gets_the_same_scale_columns():
    t = read_llm_benchmark_matrix(LLM_MATRIX)
    b = t.benchmarks.set_index("benchmark_id")
    assert list(t.benchmarks.columns[:7]) == [
        "benchmark_id",
        "name",
        "category",
        "metric",
        "scale",
        "is_percentage",
        "lower_is_better",
    ]
    assert b.loc[b["scale"] != "percent", "scale"].to_dict() == {
        "codeforces_rating": "rating",
        "chatbot_arena_elo": "elo",
        "aa_intelligence_index": "index",
        "gdpval_aa": "score",
    }  # "GDP-Val AA", metric "score": the rule cannot see that it is an Elo
    assert not b["lower_is_better"].any()


# --------------------------------------------------------------------------- attach on small tables


def small_tables(ids=("a", "b", "elo")) -> AggregateTables:
    models = pd.DataFrame(
        {
            "model_id": ["m1", "m2"],
            "name": ["M1", "M2"],
            "provider": ["P", "P"],
            "reasoning": pd.array([True, False], dtype="boolean"),
            "open_weights": pd.array([None, True], dtype="boolean"),
            "release_date": pd.to_datetime(["2025-01-01", None]),
        }
    )
    benchmarks = pd.DataFrame(
        {
            "benchmark_id": list(ids),
            "name": [i.upper() for i in ids],
            "category": pd.Series([None] * len(ids), dtype="str"),
            "metric": pd.Series([None] * len(ids), dtype="str"),
        }
    )
    scores = pd.DataFrame(
        {
            "model_id": ["m1", "m2"],
            "benchmark_id": [ids[0], ids[-1]],
            "score": [50.0, 1300.0],
            "source_url": pd.Series([None, None], dtype="str"),
            "source_type": pd.Series([None, None], dtype="str"),
            "audit_status": pd.Series([None, None], dtype="str"),
        }
    )
    return AggregateTables(models=models, benchmarks=benchmarks, scores=scores)


GOOD_ROWS = [
    ["a", "A", "Math", "% correct", "30", "percent", "true", "false", "https://a"],
    ["b", "B", "Coding", "", "", "edit_distance", "false", "true", "https://b"],
    ["elo", "ELO", "Other", "Elo rating", "8000", "elo", "false", "false", "https://elo"],
]


def write_inventory(tmp_path: Path, rows, header=INVENTORY_COLUMNS, name="inv.csv") -> Path:
    path = tmp_path / name
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def good_rows():
    return [list(r) for r in GOOD_ROWS]


def test_attach_happy_path(tmp_path):
    t = small_tables()
    out = attach_benchmark_inventory(t, write_inventory(tmp_path, good_rows()))
    b = out.benchmarks
    assert b.columns.tolist() == [
        "benchmark_id",
        "name",
        "category",
        "metric",
        "scale",
        "is_percentage",
        "lower_is_better",
        "items",
    ]
    assert b["benchmark_id"].tolist() == ["a", "b", "elo"]
    assert b["category"].tolist() == ["Math", "Coding", "Other"]
    assert b["metric"].iloc[0] == "% correct" and pd.isna(b["metric"].iloc[1])  # "" -> NA
    assert b["scale"].tolist() == ["percent", "edit_distance", "elo"]
    assert str(b["is_percentage"].dtype) == "boolean" and b["is_percentage"].tolist() == [True, False, False]
    assert b["lower_is_better"].tolist() == [False, True, False]
    assert str(b["items"].dtype) == "Int64" and b["items"].iloc[2] == 8000 and pd.isna(b["items"].iloc[1])
    assert out.models is t.models and out.scores is t.scores
    assert t.benchmarks.columns.tolist() == ["benchmark_id", "name", "category", "metric"]  # input untouched
    assert t.benchmarks["category"].isna().all()


def test_attach_keeps_source_values_and_row_order(tmp_path):
    t = small_tables()
    t.benchmarks.loc[0, "category"] = "From source"
    rows = good_rows()[::-1]  # file order does not matter
    out = attach_benchmark_inventory(t, write_inventory(tmp_path, rows))
    assert out.benchmarks["benchmark_id"].tolist() == ["a", "b", "elo"]
    assert out.benchmarks["category"].tolist() == ["From source", "Coding", "Other"]
    # attaching twice replaces the columns instead of duplicating them
    again = attach_benchmark_inventory(out, write_inventory(tmp_path, rows))
    assert again.benchmarks.columns.tolist() == out.benchmarks.columns.tolist()


def test_attach_unknown_id(tmp_path):
    rows = good_rows() + [["ghost", "G", "Math", "%", "1", "percent", "true", "false", ""]]
    path = write_inventory(tmp_path, rows)
    with pytest.raises(DataError) as ei:
        attach_benchmark_inventory(small_tables(), path)
    assert ei.value.path == str(path) and "benchmark_id" in ei.value.field and "line 5" in ei.value.field
    assert "ghost" in ei.value.problem and "Fix:" in str(ei.value)


def test_attach_missing_id(tmp_path):
    path = write_inventory(tmp_path, good_rows()[:2])
    with pytest.raises(DataError) as ei:
        attach_benchmark_inventory(small_tables(), path)
    assert ei.value.path == str(path) and "benchmark_id" in ei.value.field
    assert "'elo'" in ei.value.problem and "no row" in ei.value.problem and "add one row" in ei.value.fix


def test_attach_duplicate_id(tmp_path):
    path = write_inventory(tmp_path, good_rows() + [good_rows()[0]])
    with pytest.raises(DataError) as ei:
        attach_benchmark_inventory(small_tables(), path)
    assert "duplicate benchmark id 'a'" in ei.value.problem and "line 5" in ei.value.field
    assert "first at row 0 (line 2)" in ei.value.problem


@pytest.mark.parametrize(
    "col, value, fragment",
    [
        ("is_percentage", "yes", "not a boolean"),
        ("lower_is_better", "1", "not a boolean"),
        ("scale", "percentage", "unknown scale"),
        ("is_percentage", "false", "contradicts scale='percent'"),
        ("items", "8,000", "not a whole number"),
        ("items", "-3", "not a whole number"),
        ("benchmark_id", "", "benchmark id is empty"),
    ],
)
def test_attach_bad_values(tmp_path, col, value, fragment):
    rows = good_rows()
    rows[0][INVENTORY_COLUMNS.index(col)] = value
    path = write_inventory(tmp_path, rows)
    with pytest.raises(DataError) as ei:
        attach_benchmark_inventory(small_tables(), path)
    assert fragment in ei.value.problem
    assert ei.value.path == str(path) and f"'{col}'" in ei.value.field and "line 2" in ei.value.field
    assert ei.value.fix


def test_attach_accepts_empty_flags_as_na(tmp_path):
    rows = good_rows()
    rows[1][5:8] = ["", "", "TRUE"]
    b = attach_benchmark_inventory(small_tables(), write_inventory(tmp_path, rows)).benchmarks
    assert pd.isna(b["scale"].iloc[1]) and pd.isna(b["is_percentage"].iloc[1]) and b["lower_is_better"].iloc[1]


def test_inventory_file_problems(tmp_path):
    with pytest.raises(DataError) as ei:
        attach_benchmark_inventory(small_tables(), tmp_path / "nope.csv")
    assert ei.value.field == "(file)"
    header = [c for c in INVENTORY_COLUMNS if c != "scale"]
    rows = [[v for c, v in zip(INVENTORY_COLUMNS, r) if c != "scale"] for r in good_rows()]
    with pytest.raises(DataError) as ei:
        attach_benchmark_inventory(small_tables(), write_inventory(tmp_path, rows, header=header))
    assert ei.value.field == "scale" and "missing" in ei.value.problem
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(DataError) as ei:
        attach_benchmark_inventory(small_tables(), tmp_path / "empty.csv")
    assert ei.value.field == "(header)"
    # name and link are informational and may be left out
    slim = ["benchmark_id", "category", "metric", "items", "scale", "is_percentage", "lower_is_better"]
    rows = [[v for c, v in zip(INVENTORY_COLUMNS, r) if c in slim] for r in good_rows()]
    attach_benchmark_inventory(small_tables(), write_inventory(tmp_path, rows, header=slim))


# --------------------------------------------------------------------------- the shared scale rule


@pytest.mark.parametrize(
    "metric, lo, hi, name, expected",
    [
        ("% correct", 3.0, 97.5, "GPQA Diamond", "percent"),
        ("pass@1 %", 0.0, 100.0, None, "percent"),
        ("accuracy (%)", None, None, None, "percent"),  # no scores: text alone
        ("—", 10.0, 90.0, "BFCL", "percent"),  # unlabelled, 0-100
        ("overall score", 35.9, 77.1, "LiveBench", "percent"),  # generic score within 0-100
        ("Elo rating", 1338.0, 1496.0, "Chatbot Arena Elo", "elo"),
        ("Elo rating", 717.0, 3206.0, "Codeforces Rating", "rating"),  # the name wins over the metric
        ("score", 1195.0, 1674.0, "GDPval (Artificial Analysis ELO)", "elo"),
        ("score", 1606.0, 1633.0, "GDP-Val AA", "score"),  # unbounded, unit not stated
        ("dollars", 9000.0, 112000.0, None, "dollars"),
        (None, 9000.0, 112000.0, "SWE-Lancer IC SWE Diamond Freelance ($)", "dollars"),
        ("index score", 50.0, 73.0, "AA Intelligence Index", "index"),
        ("edit distance (lower=better)", 0.099, 91.2, "OmniDocBench 1.5", "edit_distance"),
        ("", 549.0, 8017.59, "Vending-Bench 2", "score"),
        ("%", -5.0, 50.0, None, "score"),  # a negative value is no percentage
        ("%", 10.0, 150.0, None, "score"),
        (float("nan"), float("nan"), float("nan"), None, "percent"),
        (pd.NA, np.float64(2.0), np.float64(3.0), pd.NA, "percent"),
    ],
)
def test_infer_scale_cases(metric, lo, hi, name, expected):
    assert infer_scale(metric, lo, hi, name=name) == expected


@pytest.mark.parametrize(
    "metric, name, scale, expected",
    [
        ("%", "FActScore (hallucination rate)", "percent", True),
        ("%", "LongFact-Objects (hallucination rate)", None, True),
        ("edit distance (lower=better)", "OmniDocBench 1.5", None, True),
        ("score", "Something (lower is better)", None, True),
        ("word error rate", None, None, True),
        (None, "X", "edit_distance", True),
        ("% correct", "SimpleQA", "percent", False),
        ("Elo rating", "Codeforces Rating", "rating", False),
        ("% win rate", "Arena-Hard Auto", "percent", False),
        ("dollars", None, "dollars", False),
    ],
)
def test_infer_lower_is_better_cases(metric, name, scale, expected):
    assert infer_lower_is_better(metric, name=name, scale=scale) is expected


def test_with_inferred_scales_uses_observed_range():
    t = small_tables()
    out = with_inferred_scales(t)
    b = out.benchmarks
    assert b.columns.tolist() == [
        "benchmark_id",
        "name",
        "category",
        "metric",
        "scale",
        "is_percentage",
        "lower_is_better",
    ]
    assert b["scale"].tolist() == ["percent", "percent", "elo"]  # "ELO" in the name
    assert str(b["is_percentage"].dtype) == "boolean" and b["is_percentage"].tolist() == [True, True, False]
    t.benchmarks.loc[2, "name"] = "Arena"
    assert with_inferred_scales(t).benchmarks["scale"].tolist() == ["percent", "percent", "score"]  # 1300 > 100


# --------------------------------------------------------------------------- catalog: source: repo


def _catalog(tmp_path: Path, inventory: dict) -> Path:
    doc = {
        "sources": {"benchpress": {"repository": "microsoft/benchpress", "commit": "1" * 40}},
        "url_template": "https://raw.githubusercontent.com/{repository}/{commit}/{path}",
        "datasets": {
            "agg": {
                "title": "Agg",
                "suite": "Agg",
                "kind": "aggregate",
                "source": "benchpress",
                "format": "benchpress_json",
                "files": {"scores": {"path": "website/data.json", "sha256": None}, "inventory": inventory},
            }
        },
    }
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_repo_source_resolves_against_the_catalog_not_the_package(tmp_path, monkeypatch):
    """`source: repo` paths start at the catalog's repo_root (relative to the catalog file), wherever
    the process runs and wherever benchcast is installed."""
    cat = load_catalog(_catalog(tmp_path, {"path": "resources/inv.csv", "source": "repo"}))
    spec = cat["agg"]
    assert spec.files["inventory"].in_repo and not spec.files["scores"].in_repo
    assert cat.repo_root == tmp_path.resolve()
    assert spec.local_path(tmp_path / "raw", "scores") == tmp_path / "raw" / "benchpress" / "website" / "data.json"
    assert cat.local_path("agg", "inventory", tmp_path / "raw") == tmp_path.resolve() / "resources" / "inv.csv"
    with pytest.raises(ConfigError, match="kept with the catalog"):
        spec.local_path(tmp_path / "raw", "inventory")  # no repo_dir: never a guess
    with pytest.raises(ConfigError, match="no download URL"):
        spec.url("inventory", cat.url_template)
    # a catalog in a subfolder whose repo_root is its parent, loaded from elsewhere by a relative path
    (tmp_path / "project" / "config").mkdir(parents=True)
    moved = tmp_path / "project" / "config" / "catalog.yaml"
    doc = yaml.safe_load(_catalog(tmp_path, {"path": "resources/inv.csv", "source": "repo"}).read_text())
    moved.write_text(yaml.safe_dump({**doc, "repo_root": ".."}, sort_keys=False))
    monkeypatch.chdir(tmp_path / "project")
    cat = load_catalog("config/catalog.yaml")
    assert cat.local_path("agg", "inventory", "raw") == (tmp_path / "project" / "resources" / "inv.csv").resolve()


@pytest.mark.parametrize("bad", ["../outside.csv", "/abs/inv.csv"])
def test_repo_source_path_must_stay_inside(tmp_path, bad):
    with pytest.raises(ConfigError, match="not inside the catalog's repo_root"):
        load_catalog(_catalog(tmp_path, {"path": bad, "source": "repo"}))


def test_read_aggregate_with_repo_inventory(tmp_path):
    """read_aggregate attaches files.inventory, looked up under repo_dir; a missing one is a DataError."""
    raw = tmp_path / "raw" / "benchpress" / "website"
    raw.mkdir(parents=True)
    doc = {
        "models": [{"id": "m1", "name": "M1"}],
        "benchmarks": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}],
        "observed": [[50.0, 0.1]],
        "sources": [[None, None]],
    }
    (raw / "data.json").write_text(json.dumps(doc))
    spec = load_catalog(_catalog(tmp_path, {"path": "inv.csv", "source": "repo"}))["agg"]
    with pytest.raises(DataError) as ei:
        read_aggregate(spec, tmp_path / "raw", repo_dir=tmp_path)
    assert ei.value.field == "files.inventory" and "repo_root" in ei.value.fix
    write_inventory(tmp_path, good_rows()[:2])
    t = read_aggregate(spec, tmp_path / "raw", repo_dir=tmp_path)
    assert t.benchmarks["scale"].tolist() == ["percent", "edit_distance"]
    assert t.benchmarks["category"].tolist() == ["Math", "Coding"]
