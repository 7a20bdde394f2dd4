"""Paper-vs-ours verdicts of a slice (benchcast.output.comparison): the tolerance widened for fewer
trials by sqrt(paper's / ours), cells a slice cannot compare reported and not counted, a full run's
verdicts unchanged, and the index naming the slice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchcast.output.comparison import mark_not_comparable, trial_factor
from benchcast.output.tables import within_tolerance
from benchcast.studies.benchpress.analysis import judge as bp_judge
from benchcast.studies.cf_tasks.analysis import claims, oversampling
from benchcast.studies.misses_the_mark.analysis import judge as mtm_judge
from benchcast.studies.tailoredbench import analysis as tb
from benchcast.workflow.paper_index import not_comparable, render_index, share_within

MTM_TOLERANCE = {"abs": 0.6, "rel": 0.15, "rel_by_method": {"p_irt": 0.2}}


def test_trial_factor_widens_only_below_the_papers_trials():
    assert trial_factor(100, 10) == pytest.approx(np.sqrt(10))
    assert trial_factor(100, 25) == pytest.approx(2.0)
    assert trial_factor(100, 100) == 1.0 and trial_factor(100, 400) == 1.0 and trial_factor(30, np.nan) == 1.0
    assert trial_factor(50, np.array([10, 50, 5])).tolist() == pytest.approx([np.sqrt(5), 1.0, np.sqrt(10)])


def mtm_cells(trials: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dataset": ["mrpc"] * 3,
            "split": ["interpolation"] * 3,
            "n": [50] * 3,
            "method": ["random_sampling", "p_irt", "pca"],
            # |diff| 1.5 (tolerance 0.6), 2.0 (0.2 x 5 = 1.0), 3.0 (0.6)
            "ours": [3.5, 7.0, 4.0],
            "paper": [2.0, 5.0, 1.0],
            "trials": [trials] * 3,
        }
    )


def test_a_slice_cell_within_the_widened_tolerance_counts():
    # 10 of the paper's 100 trials: tolerance x sqrt(10) = 3.16 -> 1.90 abs, 0.63 x paper for p_irt
    judged = mtm_judge(mtm_cells(10), MTM_TOLERANCE)
    assert judged.within_tolerance.tolist() == [True, True, False]
    assert judged.tolerance_factor.tolist() == pytest.approx([3.1623] * 3)
    assert (judged.not_comparable == "").all()


def test_a_full_runs_cells_are_judged_as_before():
    cells = mtm_cells(100)
    judged = mtm_judge(cells, MTM_TOLERANCE)
    rel = pd.Series([0.15, 0.2, 0.15])
    assert judged.within_tolerance.tolist() == within_tolerance(cells.ours, cells.paper, 0.6, rel).tolist()
    assert judged.within_tolerance.tolist() == [False, False, False]
    assert (judged.tolerance_factor == 1.0).all()


def test_the_papers_variant_is_judged_under_the_papers_method():
    cells = mtm_cells(100).assign(method=["random_sampling", "p_irt_variant", "pca"])
    cells["paper_method"] = ["random_sampling", "p_irt", "pca"]
    assert mtm_judge(cells, MTM_TOLERANCE).rel_tolerance.tolist() == [0.15, 0.2, 0.15]


def test_tailoredbench_tolerance_widens_with_fewer_runs():
    table6 = pd.DataFrame({"method": ["tailoredbench", "tailoredbench"], "budget": [20, 30], "tau": [0.80, 0.80],
                           "mae": [0.05, 0.05], "runs": [10, 100]})  # fmt: skip
    paper = pd.DataFrame({"table": ["table6"] * 2, "row": ["tailoredbench"] * 2, "budget": [20, 30],
                          "metric": ["tau", "tau"], "value": [0.82, 0.82]})  # fmt: skip
    cmp = tb.paper_vs_ours({"table6": table6}, paper, {"default": {"tau": 0.1}, "table6": {"tau": 0.01}})
    # |diff| 0.02: within 0.01 x sqrt(100 / 10) = 0.032 at 10 runs, outside 0.01 at the paper's 100
    assert cmp.within_tolerance.tolist() == [True, False]
    assert cmp.tolerance.tolist() == pytest.approx([0.0316, 0.01], abs=1e-4)


def test_a_rank_among_fewer_settings_is_not_comparable_and_not_counted():
    pvo = pd.DataFrame(
        {
            "table": ["table11"] * 3 + ["table6", "table7"],
            "row": ["logit|bias_als"] * 3 + ["all", "H6|strong_neighbor_support"],
            "column": ["rank", "medape", "coverage", "n_pairs", "medae_p"],
            "ours": [1.0, 6.3, 1.0, 53211.0, 0.37],
            "paper": [7.0, 6.0, 1.0, 531498.0, 0.035],
            "source": ["grid", "grid", "grid", "section5", "hypotheses"],
        }
    )
    cells = {"rel": 0.05, "abs": 0.0, "abs_by_column": {"rank": 2, "coverage": 0.01, "medae_p": 0.005}}
    slice_ = bp_judge(pvo, cells, settings=8, folds=3, seeds=2)
    # the rank is among 8 settings (the paper's 84); the pair count and the p-value: 2 of its 10 seeds
    assert slice_.not_comparable.str.len().gt(0).tolist() == [True, False, False, True, True]
    assert "8 settings" in slice_.not_comparable[0] and "84" in slice_.not_comparable[0]
    # MedAPE over 3 of 30 folds: 0.05 x 6 x sqrt(10) = 0.95 >= |6.3 - 6.0|
    assert slice_.within_tolerance.tolist()[1:3] == [True, True]
    assert share_within(slice_) == (2, 2) and not_comparable(slice_) == 3
    full = bp_judge(pvo, cells, settings=84, folds=30, seeds=10)
    assert (full.not_comparable == "").all() and (full.tolerance_factor == 1.0).all()
    plain = within_tolerance(pvo.ours, pvo.paper, pd.Series([2, 0.0, 0.01, 0.0, 0.005]), 0.05)
    assert full.within_tolerance.tolist() == plain.tolist()


def test_cf_ahead_among_fewer_methods_is_not_comparable():
    table = pd.DataFrame(
        {
            "matrix": ["m"] * 3,
            "split": ["date"] * 3,
            "ratio": [0.1] * 3,
            "method": ["cf", "cf_no_ot", "random_sampling"],
            "mae": [0.03, 0.04, 0.05],
        }
    )
    out = claims(table, {"many_models": ["m"], "few_models": [], "mae_at_0.1": 0.035, "below_random": 0.25})
    ahead = out[out.claim == "CF ahead when models are many"].iloc[0]
    assert "3 methods" in ahead.not_comparable and "clustering" in ahead.not_comparable
    assert pd.isna(ahead.within_tolerance)
    assert share_within(out) == (3, 3)  # the MAE bound, the margin over random, OT at every ratio


def test_the_ot_claim_is_judged_only_where_oversampling_acts():
    """Issue 58 item 5: identical CF estimates with and without OT (no task similar enough) make
    the OT claim not comparable, with the reason; one changed estimate and it is judged."""
    table = pd.DataFrame(
        {
            "matrix": ["many"] * 2 + ["few"] * 2,
            "split": ["date"] * 4,
            "ratio": [0.1] * 4,
            "method": ["cf", "cf_no_ot"] * 2,
            "mae": [0.03, 0.03, 0.02, 0.03],
        }
    )
    runs = pd.DataFrame(
        {"repeat": 0, "model_id": ["a", "a", "b", "b"], "task": ["t1", "t2"] * 2, "estimate": 0.5, "truth": 0.6}
    )
    moved = runs.assign(estimate=[0.5, 0.55, 0.5, 0.5])
    acts = oversampling([("many", "date", 0.1), ("few", "date", 0.1)], [runs, moved], [runs, runs])
    assert acts[["matrix", "changed", "tasks_changed", "tasks"]].values.tolist() == [
        ["many", 0, 0, 2],
        ["few", 1, 1, 2],
    ]
    assert acts.mae_ot.tolist() == pytest.approx([0.1, 0.0875]) and acts.mae_no_ot.tolist() == pytest.approx([0.1, 0.1])
    settings = {"many_models": [], "few_models": [], "mae_at_0.1": 0.035, "below_random": 0.25}
    out = claims(table, settings, acts).set_index("matrix")
    assert out.at["many", "status"] == "not comparable" and "never acts" in out.at["many", "not_comparable"]
    assert out.at["few", "status"] == "within" and out.at["few", "within_tolerance"] is True
    # without the runs' estimates (an older table) the claim is judged as before
    assert claims(table, settings).set_index("matrix").status.to_dict() == {"few": "within", "many": "outside"}


def test_mark_not_comparable_keeps_the_first_reason():
    t = pd.DataFrame({"ours": [1.0, 2.0], "paper": [1.0, 2.0], "within_tolerance": [True, True]})
    t = mark_not_comparable(t, [True, False], "first")
    t = mark_not_comparable(t, [True, True], "second")
    assert t.not_comparable.tolist() == ["first", "second"] and pd.isna(t.within_tolerance[0])


ENTRY = {
    "title": "Alpha paper",
    "paper": "../shared/papers/alpha.txt",
    "tolerance": "|d| <= 1",
    "paper_vs_ours": "results/tables/alpha/paper_vs_ours.csv",
    "sections": [],
}


def test_the_index_names_the_slice_and_its_not_comparable_numbers():
    table = pd.DataFrame(
        {
            "ours": [1.0, 2.0, 3.0],
            "paper": [1.0, 9.0, 30.0],
            "within_tolerance": [True, False, np.nan],
            "not_comparable": ["", "", "a rank among this run's 8 settings"],
        }
    )
    entry = {
        **ENTRY,
        "slice": True,
        "scope": "a slice of the full study (config/alpha.yaml): 10 of the paper's 100 trials",
    }
    text = render_index(["alpha"], {"alpha": entry}, {"alpha": table})
    assert "**This run is a slice** of every study" in text
    assert "sqrt(paper's trials / this run's trials)" in text
    assert "| [alpha](#alpha) | Alpha paper | slice | 2 | 1 | 50.0% | 1 |" in text
    assert "1 of 2 numbers within tolerance, 1 not comparable" in text
    assert "This run is a slice of the full study (config/alpha.yaml): 10 of the paper's 100 trials." in text
    full = render_index(["alpha"], {"alpha": {**entry, "slice": False, "scope": "the full study"}}, {"alpha": table})
    assert "This run is a slice" not in full and "| full |" in full
