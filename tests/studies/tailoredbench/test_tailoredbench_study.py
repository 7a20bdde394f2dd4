"""The TailoredBench study: its plan (settings, figure points, checks before any job) and its metrics
and tables (known answers)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from benchcast.data.catalog import DEFAULT_CATALOG, load_catalog
from benchcast.errors import ConfigError
from benchcast.studies.tailoredbench import analysis
from benchcast.studies.tailoredbench.jobs import Jobs

CATALOG = load_catalog(DEFAULT_CATALOG)


def config(**over):
    base = {
        "dataset": "tailoredbench_gsm8k",
        "trials": 3,
        "min_accuracy": None,
        "budgets": [20, 30],
        "settings": {
            "random_sampling": {"method": "random_sampling"},
            "tailoredbench": {"method": "tailoredbench"},
            "tb_g5": {"method": "tailoredbench", "params": {"g_size": 5}, "budgets": [30]},
        },
        "table6": {"random_sampling": "random_sampling", "tailoredbench": "tailoredbench"},
        "ablations": {"table13": {"budget": 30, "rows": {"g5": "tb_g5", "g10": "tailoredbench"}}},
        "figures": {"figure4": {"budget": 30, "values": [10, 40]}},
        "tolerance": {"default": {"tau": 0.015, "mae": 0.005}, "table6": {"tau": 0.01, "mae": 0.004}},
    }
    base.update(over)
    return base


def test_plan_expands_settings_and_figure_points():
    plan = Jobs(config(), CATALOG)
    assert plan.settings["figure4_1"].params == {"native": "top", "native_value": 40}
    assert plan.settings["figure4_1"].budgets == (30,)
    assert ("tailoredbench", 20) in plan.cells() and ("tb_g5", 20) not in plan.cells()
    assert len(plan.cells()) == 2 + 2 + 1 + 2
    assert plan.figure_points("figure4") == [(10, "figure4_0"), (40, "figure4_1")]
    assert "results/tables/tailoredbench/table6.csv" in plan.final_outputs()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"table6": {"tailoredbench": "nope"}}, "names setting 'nope'"),
        ({"ablations": {"t": {"budget": 25, "rows": {"a": "tb_g5"}}}}, "does not run at inference count 25"),
        ({"settings": {"x": {"method": "unknown"}}, "table6": {}, "ablations": {}}, "unknown method 'unknown'"),
        ({"budgets": [30, 1319]}, "not below the 1319 items"),
    ],
)
def test_plan_refuses_bad_configs_before_any_job(change, message):
    with pytest.raises(ConfigError, match=message):
        Jobs(config(**change), CATALOG)


def test_run_metrics_known_answers():
    est = pd.DataFrame(
        {
            "trial": [0, 0, 0, 0, 1, 1, 1, 1],
            "estimate": [0.1, 0.2, 0.4, 0.3, 0.5, 0.5, 0.5, 0.5],
            "truth": [0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.4],
        }
    )
    m = analysis.run_metrics(est)
    assert m.tau[0] == pytest.approx(stats.kendalltau([0.1, 0.2, 0.4, 0.3], [0.1, 0.2, 0.3, 0.4]).statistic)
    assert m.tau[1] == 0.0  # constant estimates: NaN counts as 0, as the released code
    assert m.mae[0] == pytest.approx(0.05) and m.mae[1] == pytest.approx(0.25)
    assert m.pairwise[0] == pytest.approx(5 / 6) and m.pairwise[1] == pytest.approx(0.5)


def test_summary_table6_and_paper_comparison():
    per_run = pd.DataFrame(
        {
            "setting": ["tb"] * 4 + ["rs"] * 4,
            "budget": [20, 20, 30, 30] * 2,
            "trial": [0, 1] * 4,
            "tau": [0.8, 0.9, 0.85, 0.87, 0.7, 0.8, 0.75, 0.77],
            "mae": [0.03, 0.05, 0.04, 0.04, 0.06, 0.08, 0.07, 0.07],
            "pairwise": [0.9] * 8,
        }
    )
    summary = analysis.summarize(per_run)
    t6 = analysis.table6(summary, {"tailoredbench": "tb", "random_sampling": "rs"})
    assert list(t6.columns) == ["method", "budget", "tau", "mae", "tau_se", "mae_se", "runs"]
    first = t6.iloc[0]
    assert (first.method, first.budget, first.runs) == ("tailoredbench", 20, 2)
    assert first.tau == pytest.approx(0.85) and first.tau_se == pytest.approx(np.std([0.8, 0.9], ddof=1) / np.sqrt(2))
    paper = pd.DataFrame(
        {
            "table": ["table6", "table6"],
            "row": ["tailoredbench", "gp_irt"],
            "budget": [20, 20],
            "metric": ["tau", "tau"],
            "value": [0.855, 0.8],
        }
    )
    cmp = analysis.paper_vs_ours({"table6": t6}, paper, {"default": {"tau": 0.1, "mae": 0.1}, "table6": {"tau": 0.01}})
    # gp_irt was not run: marked so, not counted as a miss
    assert cmp.status.tolist() == ["within", "not run"]
    assert cmp.within_tolerance.tolist()[0] is True and pd.isna(cmp.within_tolerance.tolist()[1])
    assert cmp.column.tolist() == ["tau@20", "tau@20"] and np.isnan(cmp.ours[1])
    z = analysis.z_tests(per_run, "tb", {"random_sampling": "rs"})
    tau20 = z[(z.budget == 20) & (z.metric == "tau")].iloc[0]
    assert tau20.z == pytest.approx(0.1 / np.sqrt(0.005 / 2 + 0.005 / 2)) and tau20.p == pytest.approx(
        stats.norm.sf(tau20.z)
    )
