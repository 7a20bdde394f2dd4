"""The method comparison's plan and tables: which files each protocol's study gives for a compared
method (its own jobs for a method it already runs, a guest's otherwise), the config errors before
any job, and the rankings on tables whose answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchcast.data.catalog import DEFAULT_CATALOG, load_catalog
from benchcast.errors import ConfigError
from benchcast.studies import registry
from benchcast.studies.contract import GuestMethod
from benchcast.studies.heldout_intervals.study import interval_score
from benchcast.studies.method_comparison.analysis import protocol_scores, rankings, summary, summary_markdown
from benchcast.studies.method_comparison.study import MethodComparison

CATALOG = load_catalog(DEFAULT_CATALOG)
ASKED = "config method_comparison.methods"

MTM = {
    "datasets": ["commonsense", "mrpc"],
    "splits": ["interpolation"],
    "budgets": [50, 100],
    "trials": 3,
    "methods": [{"name": "random_sampling"}, {"name": "pca", "label": "pca_k2", "params": {"k_grid": [2]}}],
    "irt": {"dims": 2},
    "figure5": {"dataset": "auto", "split": "interpolation", "bins": 6},
}


def mtm(guests=()):
    from helpers import REPO

    from benchcast.workflow.config_check import load_schema, validate

    cfg = {k: (list(v) if isinstance(v, list) else v) for k, v in MTM.items()}
    validate(cfg, load_schema(REPO / "workflow" / "schemas" / "misses_the_mark.schema.yaml"), "misses_the_mark", None)
    return registry()["misses_the_mark"](cfg, CATALOG, guests)


def test_a_method_the_study_runs_is_its_own_job_and_a_new_one_a_guest_beside_it():
    study = mtm(
        [
            GuestMethod("random_sampling", "random_sampling", None, ASKED),  # the study's own
            GuestMethod("pca_k2", "pca", {"k_grid": [2]}, ASKED),  # the same settings: its own too
            GuestMethod("aipw", "aipw", {"alpha": 10.0}, ASKED),  # a guest
        ]
    )
    assert study.jobs.methods == ["random_sampling", "pca_k2"]  # the study's tables: its own methods only
    assert list(study.jobs.guests) == ["aipw"]
    assert study.jobs.method_params("aipw", "interpolation") == {"alpha": 10.0}
    assert study.jobs.name_of("aipw") == "aipw"
    runs = study.protocol_runs("random_sampling")
    assert [r["path"] for r in runs] == [
        f"results/runs/misses_the_mark/{d}/interpolation/random_sampling/n={n}.parquet"
        for d in ("commonsense", "mrpc")
        for n in (50, 100)
    ]
    assert {r["group"] for r in runs} == {"commonsense/interpolation", "mrpc/interpolation"}


def test_a_guest_with_other_settings_under_a_studys_label_is_refused_in_one_line():
    with pytest.raises(
        ConfigError, match=r"'pca_k2' is a method of misses_the_mark already .* Fix: give the entry another label"
    ):
        mtm([GuestMethod("pca_k2", "pca", {"k_grid": [5]}, ASKED)])
    with pytest.raises(ConfigError, match="unknown method 'nope'"):
        mtm([GuestMethod("nope", "nope", None, ASKED)])


def test_protocols_that_name_runs_by_method_refuse_a_label():
    from benchcast.studies.mdad.jobs import Jobs

    cfg = {
        "datasets": ["mdad_gpqa"],
        "n_targets": 50,
        "n_sources": [10, 300],
        "sizes": {"default": [10, 250], "mdad_gpqa": [10, 200]},
        "methods": [{"name": "random_sampling"}],
    }
    jobs = Jobs(cfg, CATALOG)
    with pytest.raises(ConfigError, match="mdad names its runs by method"):
        jobs.add_guests([GuestMethod("rs2", "random_sampling", {}, ASKED)])
    jobs.add_guests(
        [GuestMethod("aipw", "aipw", None, ASKED), GuestMethod("random_sampling", "random_sampling", None, ASKED)]
    )
    assert [(c.method, c.n_source, c.sizes) for c in jobs.guest_cells] == [("aipw", 300, (10, 200))]
    assert [c.method for c in jobs.cells] == ["random_sampling", "random_sampling"]  # its own, every source count
    assert jobs.cell("mdad_gpqa", "aipw", 300).sizes == (10, 200)


def test_the_comparison_asks_every_listed_protocol_and_refuses_unknown_ones():
    cfg = {
        "protocols": ["misses_the_mark", "tailoredbench"],
        "methods": [
            {"name": "random_sampling"},
            {"name": "aipw", "label": "aipw10", "params": {"alpha": 10.0}, "protocols": ["misses_the_mark"]},
        ],
    }
    asked = MethodComparison.guest_methods(cfg)
    assert {p: [g.label for g in gs] for p, gs in asked.items()} == {
        "misses_the_mark": ["random_sampling", "aipw10"],
        "tailoredbench": ["random_sampling"],
    }
    with pytest.raises(ConfigError, match="'benchpress' is not a study that offers its protocol"):
        MethodComparison.guest_methods({**cfg, "protocols": ["benchpress"]})
    with pytest.raises(ConfigError, match="names protocol 'mdad', which method_comparison.protocols does not list"):
        MethodComparison.guest_methods({**cfg, "methods": [{"name": "aipw", "protocols": ["mdad"]}]})
    with pytest.raises(ConfigError, match="'aipw' is listed twice"):
        MethodComparison.guest_methods({**cfg, "methods": [{"name": "aipw"}, {"name": "aipw"}]})


def scores_table():
    """Two groups, three trials; method b is 1 point worse than a in every trial, c ties a on
    average but wins trial 0 and loses trial 2."""
    rows = []
    for group in ("g1", "g2"):
        for trial in range(3):
            base = 10.0 + trial
            rows += [
                ("a", 50.0, group, trial, base),
                ("b", 50.0, group, trial, base + 1),
                ("c", 50.0, group, trial, base + (-2.0, 0.0, 2.0)[trial]),
            ]
    return pd.DataFrame(rows, columns=["method", "budget", "group", "trial", "score"])


def test_rankings_are_paired_within_a_trial_with_their_spread():
    table = rankings(scores_table(), ["a", "b", "c"]).set_index("method")
    # trial 0: c 8 < a 10 < b 11 -> c 1, a 2, b 3; trial 1: a = c 11 < b 12 -> 1.5, 1.5, 3; trial 2: a 12 < b 13 < c 14
    assert table.loc["a", "rank"] == pytest.approx((2 + 1.5 + 1) / 3)
    assert table.loc["b", "rank"] == pytest.approx((3 + 3 + 2) / 3)
    assert table.loc["c", "rank"] == pytest.approx((1 + 1.5 + 3) / 3)
    assert table.loc["c", "rank_sd"] == pytest.approx(np.std([1, 1.5, 3], ddof=1))
    assert table.loc["b", "score"] == pytest.approx(12.0) and table.loc["b", "score_sd"] == pytest.approx(1.0)
    assert (table["trials"] == 3).all() and (table["groups"] == 2).all()


def test_only_the_group_and_trial_pairs_every_method_has_are_ranked():
    scores = scores_table()
    scores = scores[~((scores.method == "c") & (scores.group == "g2") & (scores.trial == 2))]
    table = rankings(scores, ["a", "b", "c"]).set_index("method")
    assert (table["trials"] == 3).all()  # trial 2 stays, on g1 only
    full = rankings(scores_table(), ["a", "b", "c"]).set_index("method")
    assert table.loc["a", "rank"] == full.loc["a", "rank"]


def test_the_summary_puts_every_protocol_and_budget_side_by_side():
    t = rankings(scores_table(), ["a", "b", "c"])
    s = summary({"p1": t, "p2": t.assign(budget=100.0)}, ["c", "a", "b"])
    assert list(s.protocol) == ["p1"] * 3 + ["p2"] * 3 and list(s.method[:3]) == ["c", "a", "b"]
    md = summary_markdown(s, ["c", "a", "b"], ["p1", "p2"])
    assert md.splitlines()[0] == "| method | p1 50 | p2 100 |"
    assert "| b | 2.67 ± 0.58 | 2.67 ± 0.58 |" in md


def test_protocol_scores_of_misses_the_mark_are_the_trials_gap_in_points():
    frame = pd.DataFrame(
        {
            "trial": [0, 0, 1, 1],
            "model_id": list("abab"),
            "estimate": [0.5, 0.6, 0.5, 0.5],
            "truth": [0.4, 0.8, 0.5, 0.7],
        }
    )
    runs = [{"method": "m", "budget": 50, "group": "d/interpolation"}]
    out = protocol_scores(registry()["misses_the_mark"], runs, [frame], {})
    assert list(out.columns) == ["method", "budget", "group", "trial", "score", "tau"]
    assert out.score.tolist() == pytest.approx([15.0, 10.0])


def test_the_interval_score_rewards_a_covering_narrow_interval_and_penalises_misses():
    truth = np.array([0.5, 0.5, 0.5])
    lower, upper = np.array([0.4, 0.45, 0.6]), np.array([0.6, 0.55, 0.7])
    assert interval_score(lower, upper, truth, 0.9).tolist() == pytest.approx([0.2, 0.1, 0.1 + 20 * 0.1])


def test_side_by_side_says_where_two_methods_ranks_differ_by_more_than_their_spread():
    from benchcast.studies.method_comparison.analysis import side_by_side

    t = rankings(scores_table(), ["a", "b", "c"])
    s = summary({"p1": t}, ["a", "b", "c"])
    both = side_by_side(s, "a", "c").iloc[0]
    assert not both.apart and both.spread == pytest.approx(np.std([1, 1.5, 3], ddof=1))
    assert side_by_side(s, "a", "b").iloc[0].apart  # b is worse in every trial: its ranks never move
