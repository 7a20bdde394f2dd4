"""benchcast.workflow.resources: cluster requests sized from measured benchmark files, and the committed
table (workflow/resources.csv) that the rules read."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from helpers import REPO

from benchcast.errors import DataError
from benchcast.workflow.dag import TARGET_RULES
from benchcast.workflow.resources import (
    ANY,
    COLUMNS,
    JobResources,
    Sizing,
    measured_rows,
    merge_measured,
    method_key,
    request_table,
    rules_defined,
)


def test_sizing_known_answers():
    sizing = Sizing()
    assert sizing.runtime(10.0) == 2  # the floor
    assert sizing.runtime(100.0) == 5  # ceil(3 * 100 / 60)
    assert sizing.runtime(1144.65) == 58
    assert sizing.mem_mb(200.0) == 600  # ceil((1.5 * 200 + 256) / 100) * 100
    assert sizing.mem_mb(100.0) == 500  # the floor
    assert sizing.mem_mb(math.nan) == 500
    assert Sizing(runtime_factor=1.0, runtime_floor_min=1).runtime(61.0) == 2


def test_method_key_order():
    assert method_key({"dataset": "gsm", "method": "pca", "n": "50"}) == "pca"
    assert method_key({"dataset": "gsm", "fit": "irt"}) == "irt"
    assert method_key({"bpmethod": "soft_impute"}) == "soft_impute"
    assert method_key({"dataset": "gsm"}) == ANY


def _samples():
    return [
        ("mtm_run", "pca", 10.0, 300.0),
        ("mtm_run", "pca", 40.0, 250.0),
        ("mtm_run", "aipw", 1.0, 120.0),
        ("mtm_splits", ANY, 0.5, 140.0),
    ]


def test_measured_rows_take_the_longest_and_the_largest_per_method_and_over_the_rule():
    rows = measured_rows(_samples()).set_index(["rule", "method"])
    assert rows.loc[("mtm_run", "pca"), ["jobs", "max_s", "peak_mb"]].tolist() == [2, 40.0, 300.0]
    assert rows.loc[("mtm_run", "aipw"), ["jobs", "max_s", "peak_mb"]].tolist() == [1, 1.0, 120.0]
    assert rows.loc[("mtm_run", ANY), ["jobs", "max_s", "peak_mb"]].tolist() == [3, 40.0, 300.0]
    assert rows.loc[("mtm_splits", ANY), "jobs"] == 1
    assert len(rows) == 4  # no duplicate '*' row for a rule without a method wildcard


def test_merge_keeps_both_tables_rows_and_the_larger_measurement():
    old = measured_rows(_samples())
    new = measured_rows([("mtm_run", "pca", 25.0, 900.0), ("bp_grid", "soft_impute", 2.0, 200.0)])
    merged = merge_measured(old, new).set_index(["rule", "method"])
    assert merged.loc[("mtm_run", "pca"), ["max_s", "peak_mb"]].tolist() == [40.0, 900.0]
    assert merged.loc[("mtm_run", ANY), "peak_mb"] == 900.0
    assert ("bp_grid", "soft_impute") in merged.index and ("mtm_run", "aipw") in merged.index


def test_requests_and_lookup_with_fallback_and_attempts():
    table = request_table(measured_rows(_samples()))
    assert list(table.columns) == COLUMNS
    assert table.groupby("rule")["method"].first().eq(ANY).all()  # '*' first within a rule
    res = JobResources(table)
    assert res.lookup("mtm_run", "pca") == (2, 800)  # 40 s -> floor 2 min; 1.5 * 300 + 256 = 706 -> 800
    assert res.lookup("mtm_run", "never_measured") == res.lookup("mtm_run", ANY)
    assert res.lookup("no_such_rule") is None and res.of("no_such_rule") == {}
    per_job = res.of("mtm_run", "method")
    assert per_job["mem_mb"]({"method": "aipw"}) == 500
    assert per_job["runtime"]({"method": "pca"}, 2) == 4  # a retry asks for twice the time
    fixed = res.of("mtm_splits")
    assert fixed["mem_mb"] == 500 and fixed["runtime"]({}, 1) == 2


def test_bad_tables_are_named(tmp_path):
    with pytest.raises(DataError, match="mem_mb"):
        JobResources(pd.DataFrame({"rule": ["a"], "method": [ANY]}), "t.csv")
    rows = request_table(measured_rows([("mtm_run", "pca", 1.0, 1.0)]))
    with pytest.raises(DataError, match="no '\\*' row"):
        JobResources(rows[rows["method"] != ANY], "t.csv")
    assert JobResources.load(tmp_path / "absent.csv").of("mtm_run") == {}


def test_rules_defined(tmp_path):
    path = tmp_path / "x.smk"
    path.write_text('rule a:\n    input: "x"\n\n\nrule b_2:\n    shell: "true"\n# rule c:\n')
    assert rules_defined([path]) == {"a", "b_2"}


def test_committed_table_sizes_every_rule_of_the_paper_studies():
    """Every rule that the two paper studies and the data layer run has a measured request (the
    download rule and the IRT validation's rules are measured when someone runs them)."""
    table = pd.read_csv(REPO / "workflow" / "resources.csv", dtype={"rule": str, "method": str})
    JobResources(table, "workflow/resources.csv")  # well-formed
    files = [REPO / "workflow" / "rules" / f"{name}.smk" for name in ("data", "misses_the_mark", "benchpress")]
    needed = rules_defined(files) - TARGET_RULES - {"download_raw"}
    assert needed - set(table["rule"]) == set()
    assert (table["runtime"] >= 1).all() and (table["mem_mb"] >= 500).all()
    assert table["peak_mb"].notna().all()
