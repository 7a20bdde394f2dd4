"""benchcast.workflow.paper_index (results/index.md), the shared tolerance rule and config includes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from benchcast.errors import ConfigError, DataError
from benchcast.output.comparison import counts, finish
from benchcast.output.tables import within_tolerance
from benchcast.workflow.paper_index import index_inputs, not_comparable, render_index, share_within
from benchcast.workflow.support import resolve_includes

ENTRIES = {
    "alpha": {
        "title": "Alpha paper",
        "paper": "../shared/papers/alpha.txt",
        "tolerance": "|d| <= 1",
        "paper_vs_ours": "results/tables/alpha/paper_vs_ours.csv",
        "sections": [["Section 1, Table 1", ["results/tables/alpha/table1.md", "results/figures/alpha/f.png"]]],
    },
    "beta": {
        "title": "Beta paper",
        "paper": "../shared/papers/beta.txt",
        "tolerance": "exact",
        "paper_vs_ours": "results/tables/beta/paper_vs_ours.csv",
        "sections": [["Section 2", ["results/tables/beta/paper_vs_ours.csv"]]],
    },
}


def test_within_tolerance_absolute_relative_and_missing():
    ours = pd.Series([10.0, 10.0, 1.0, np.nan, 5.0])
    paper = pd.Series([10.5, 12.0, 1.5, 3.0, np.nan])
    got = within_tolerance(ours, paper, 0.6, 0.15)
    # 0.5 <= 0.6; 2.0 > max(0.6, 1.8); 0.5 <= 0.6; missing numbers never count
    assert got.tolist() == [True, False, True, False, False]
    per_row = within_tolerance(ours, paper, pd.Series([0.0, 2.0, 0.0, 0.0, 0.0]), 0.0)
    assert per_row.tolist() == [False, True, False, False, False]


def test_share_within_counts_rows_with_both_numbers():
    table = pd.DataFrame(
        {
            "ours": [1.0, 2.0, np.nan, 4.0],
            "paper": [1.0, 2.5, 3.0, 4.0],
            "within_tolerance": [True, False, False, "True"],
        }
    )
    assert share_within(table) == (2, 3)
    # a number with both values and neither a verdict nor a reason is a study's mistake
    unjudged = pd.concat([table, pd.DataFrame({"ours": [5.0], "paper": [9.0], "within_tolerance": [np.nan]})])
    with pytest.raises(DataError, match="neither within_tolerance nor a not_comparable reason"):
        share_within(unjudged, "x.csv")
    with pytest.raises(DataError, match="within_tolerance"):
        share_within(table.drop(columns="within_tolerance"), "x.csv")


def test_a_finished_table_gives_a_reader_the_index_share(tmp_path):
    """Issue 58 item 5: a cell the run did not compute is "not run", not a miss; a reason on every
    not-comparable row; ``within_tolerance.mean()`` of the CSV as written is the index's share."""
    raw = pd.DataFrame(
        {
            "ours": [1.0, 2.0, np.nan, np.nan, 4.0, 5.0, 6.0],
            "paper": [1.0, 2.5, 3.0, 3.0, 4.0, 9.0, np.nan],
            "within_tolerance": [True, False, False, False, 1.0, np.nan, False],
            "not_comparable": ["", "", "", "a rank among 8 settings", "", "a count over fewer folds", ""],
        }
    )
    table = finish(raw)
    assert list(table["status"]) == [
        "within", "outside", "not run", "not run", "within", "not comparable", "no paper number",
    ]  # fmt: skip
    # a reason only where the status is not comparable; a verdict only where it is one
    assert list(table["not_comparable"]) == ["", "", "", "", "", "a count over fewer folds", ""]
    assert [v for v in table["within_tolerance"] if v == v] == [True, False, True]
    table.to_csv(tmp_path / "pvo.csv", index=False)
    read = pd.read_csv(tmp_path / "pvo.csv")
    within, compared = share_within(read)
    assert (within, compared) == (2, 3)
    assert read["within_tolerance"].mean() == pytest.approx(within / compared)
    assert not_comparable(read) == (read["not_comparable"].fillna("") != "").sum() == 1
    assert counts(read) == {"within": 2, "outside": 1, "not comparable": 1, "not run": 2, "no paper number": 1}


def test_index_links_sections_and_reports_shares():
    comparisons = {
        "alpha": pd.DataFrame({"ours": [1.0, 2.0], "paper": [1.0, 9.0], "within_tolerance": [True, False]}),
        "beta": pd.DataFrame({"ours": [1.0], "paper": [1.0], "within_tolerance": [True]}),
    }
    text = render_index(["alpha", "beta"], ENTRIES, comparisons, "results/index.md")
    # without a run description (no "slice" key) the run column is blank; no not-comparable numbers
    assert "| [alpha](#alpha) | Alpha paper |  | 2 | 1 | 50.0% | 0 |" in text
    assert "| [beta](#beta) | Beta paper |  | 1 | 1 | 100.0% | 0 |" in text
    # links are relative to the index's folder
    assert "| Section 1, Table 1 | [table1.md](tables/alpha/table1.md), [f.png](figures/alpha/f.png) |" in text
    assert text.index("## alpha") < text.index("## beta")
    assert index_inputs(["alpha", "beta"], ENTRIES) == [
        "results/tables/alpha/paper_vs_ours.csv",
        "results/tables/alpha/table1.md",
        "results/figures/alpha/f.png",
        "results/tables/beta/paper_vs_ours.csv",
    ]


def test_includes_merge_between_defaults_and_the_command_line(tmp_path):
    (tmp_path / "a.yaml").write_text(yaml.safe_dump({"seed": 1, "s": {"x": 1, "l": [1]}, "studies": ["a"]}))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({"s": {"y": 2, "l": [2, 3]}, "studies": ["b"]}))
    defaults = {"seed": 0, "raw_dir": "r", "s": {"x": 0, "z": 0}}
    merged = resolve_includes(defaults, {"include": ["a.yaml", "b.yaml"], "studies": ["a", "b"]}, tmp_path)
    assert merged == {"seed": 1, "raw_dir": "r", "s": {"x": 1, "z": 0, "y": 2, "l": [2, 3]}, "studies": ["a", "b"]}
    assert defaults == {"seed": 0, "raw_dir": "r", "s": {"x": 0, "z": 0}}  # not modified
    assert resolve_includes(defaults, {"seed": 3}, tmp_path) is None
    with pytest.raises(ConfigError, match="missing.yaml is not a file"):
        resolve_includes(defaults, {"include": ["missing.yaml"]}, tmp_path)
    (tmp_path / "nested.yaml").write_text(yaml.safe_dump({"include": ["a.yaml"]}))
    with pytest.raises(ConfigError, match="includes other files itself"):
        resolve_includes(defaults, {"include": "nested.yaml"}, tmp_path)
