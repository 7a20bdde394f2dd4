"""benchcast.studies.misses_the_mark.jobs: the jobs, inputs and parameters a config asks for,
on the repository's own configs (merged as Snakemake merges --configfile overlays)."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import REPO
from snakemake.utils import update_config, validate

from benchcast.data.catalog import load_catalog
from benchcast.errors import ConfigError
from benchcast.studies import registry
from benchcast.studies.misses_the_mark.analysis import cell_metrics, kendall_tau_markdown
from benchcast.studies.misses_the_mark.jobs import Jobs, check_budgets

SCHEMA = str(REPO / "workflow" / "schemas" / "misses_the_mark.schema.yaml")


def study_config(*files: str) -> dict:
    """config/config.yaml, then each overlay, merged key by key; the study's key validated."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for f in files:
        update_config(config, yaml.safe_load((REPO / "config" / f).read_text()))
    section = config["misses_the_mark"]
    validate(section, SCHEMA)
    return section


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(REPO / "src" / "benchcast" / "data" / "catalog.yaml")


def test_full_grid_cells_and_outputs(catalog):
    plan = Jobs(study_config("misses_the_mark.yaml"), catalog)
    assert (
        len(plan.methods) == 13
        and "pca_k2" in plan.methods
        and "tailoredbench" in plan.methods
        and plan.method_name["pca_k2"] == "pca"
    )
    assert len(plan.cells()) == 13 * 2 * 3 * 12
    assert plan.figure5_dataset == max(
        plan.config["datasets"], key=lambda d: (catalog[d].n_items, catalog[d].n_models, d)
    )
    outs = plan.final_outputs()
    assert len(outs) == 7 + 2 * 2 * 3 and len(set(outs)) == len(outs)
    assert "results/tables/misses_the_mark/kendall_tau.csv" in outs


def test_reduced_overlay_changes_only_random_search_learn_and_tailoredbench(catalog):
    full = Jobs(study_config("misses_the_mark.yaml"), catalog)
    reduced = Jobs(study_config("misses_the_mark.yaml", "misses_the_mark_reduced.yaml"), catalog)
    assert reduced.cells() == full.cells()
    for label in full.methods:
        for split in ("interpolation", "extrapolation"):
            a, b = full.method_params(label, split), reduced.method_params(label, split)
            if label == "random_search_learn":
                assert b == {**a, "max_trials": 5}
            elif label == "tailoredbench":
                assert b == {**a, "max_trials": 20}
            else:
                assert a == b


def test_method_params_carry_the_shared_irt_fit_per_split(catalog):
    plan = Jobs(study_config("misses_the_mark.yaml"), catalog)
    interp = plan.method_params("p_irt", "interpolation")["irt"]
    extra = plan.method_params("gp_irt", "extrapolation")["irt"]
    assert interp == {"dims": 10, "fitter": "map"}
    assert extra["fitter"] == "svi" and extra["dtype"] == "float32" and "share_identical_sources" not in extra
    assert plan.irt_shares_identical_sources("interpolation") and not plan.irt_shares_identical_sources("extrapolation")
    assert "irt" not in plan.method_params("aipw", "interpolation")
    assert plan.irt_with_bias  # GP-IRT is configured


def test_the_full_study_makes_qnlis_irt_prefit_in_three_trial_ranges_and_no_other(catalog):
    plan = Jobs(study_config("misses_the_mark.yaml"), catalog)
    assert plan.prefit_part_dirs("qnli", "interpolation", "irt") == [
        f"results/prefit/misses_the_mark/qnli/interpolation/irt_parts/{k}" for k in range(3)
    ]
    assert plan.prefit_parts("qnli", "lasso") == 1 and plan.prefit_part_dirs("qnli", "extrapolation", "lasso") == []
    assert plan.prefit_part_dirs("mrpc", "interpolation", "irt") == []
    with pytest.raises(Exception, match="minimum"):  # a part count below one is refused by the schema
        validate({**study_config("misses_the_mark.yaml"), "prefit_parts": {"qnli": 0}}, SCHEMA)


def test_run_inputs_name_each_methods_prefit(catalog):
    plan = Jobs(study_config("misses_the_mark.yaml"), catalog)
    plain = plan.run_inputs("mrpc", "interpolation", "aipw")
    assert set(plain) == {"models", "responses", "item_table", "splits"}
    # P-IRT and GP-IRT share one IRT prefit per (dataset, split); Lasso's path is per label
    assert (
        plan.run_inputs("mrpc", "interpolation", "p_irt")["prefit"]
        == "results/prefit/misses_the_mark/mrpc/interpolation/irt"
    )
    assert (
        plan.run_inputs("mrpc", "interpolation", "gp_irt")["prefit"]
        == "results/prefit/misses_the_mark/mrpc/interpolation/irt"
    )
    assert (
        plan.run_inputs("mrpc", "extrapolation", "lasso")["prefit"]
        == "results/prefit/misses_the_mark/mrpc/extrapolation/lasso"
    )
    assert plan.prefit_keys() == ["lasso", "irt"]
    assert plan.prefit_settings("lasso", "interpolation") == {"alpha_min": 1.0e-4, "alpha_max": 10.0, "n_alphas": 1000}
    irt = plan.prefit_settings("irt", "extrapolation")
    assert irt["with_bias"] and not irt["share_identical_sources"] and irt["irt"]["fitter"] == "svi"
    assert plan.run_priority("random_search_learn", 200) > plan.run_priority("random_search_learn", 50) > 0
    assert plan.run_priority("aipw", 200) == 0


def test_bad_configs_are_refused_with_the_key(catalog):
    cfg = study_config()
    bad = copy.deepcopy(cfg)
    bad["trials_by_method"] = {"random_serch_learn": 5}
    with pytest.raises(ConfigError, match="trials_by_method: random_serch_learn"):
        Jobs(bad, catalog)
    bad = copy.deepcopy(cfg)
    bad["methods"] = [*bad["methods"], {"name": "aipw"}]
    with pytest.raises(ConfigError, match="listed twice"):
        Jobs(bad, catalog)
    bad = copy.deepcopy(cfg)
    bad["methods"] = [{"name": "nope"}]
    with pytest.raises(ConfigError, match="unknown method 'nope'"):
        Jobs(bad, catalog)
    bad = copy.deepcopy(cfg)
    bad["methods"] = [{"name": "p_irt", "params": {"irt": {"dims": 3}}}]
    with pytest.raises(ConfigError, match="remove params.irt"):
        Jobs(bad, catalog).method_params("p_irt", "interpolation")
    with pytest.raises(ConfigError, match="misses_the_mark.budgets: budget 10000"):
        check_budgets({"misses_the_mark.budgets": [50, 10000]}, [catalog["mrpc"]])


def test_slurm_groups_keep_prefit_readers_with_their_prefit(catalog):
    plan = Jobs(study_config("misses_the_mark.yaml"), catalog)
    assert plan.run_group("p_irt") == plan.run_group("gp_irt") == plan.prefit_group("irt") == "mtm_fit_irt"
    assert plan.run_group("lasso") == plan.prefit_group("lasso")
    assert plan.run_group("random_search_learn") == "mtm_search"
    assert plan.run_group("pca") == plan.run_group("pca_k2") == "mtm_pca"  # a label runs in its method's class
    assert {plan.run_group(m) for m in ("random_sampling", "aipw", "double_optimize")} == {"mtm_light"}
    # every group the plan makes has its bundle size in the study's declaration, which the SLURM
    # profile reads (or is one per prefit)
    bundled = set(registry()["misses_the_mark"].job_groups)
    assert {plan.run_group(m) for m in plan.methods} - bundled == {"mtm_fit_irt", "mtm_fit_lasso"}


def test_slurm_group_priority_is_its_highest_members(catalog):
    plan = Jobs(study_config("misses_the_mark.yaml"), catalog)
    assert plan.group_priority("mtm_fit_irt") == 10  # the IRT fit; its P-IRT / GP-IRT runs have 0
    assert plan.group_priority("mtm_fit_lasso") == 5
    assert plan.group_priority("mtm_search") == 8  # Random-Search-Learn at n = 200: 6 + 2
    assert plan.group_priority("mtm_pca") == 5
    assert plan.group_priority("mtm_light") == 0
    assert plan.group_priority("no_such_group") == 0


def test_cell_metrics_add_kendall_tau_per_trial(tmp_path):
    truth = [0.1, 0.2, 0.3, 0.4]
    runs = []
    for method, trial_estimates in (
        ("random_sampling", ([0.1, 0.2, 0.4, 0.3], [0.5, 0.5, 0.5, 0.5])),
        ("lasso", ([0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1])),
    ):
        est = pd.DataFrame(
            {
                "trial": np.repeat([0, 1], 4),
                "model_id": ["a", "b", "c", "d"] * 2,
                "estimate": np.concatenate(trial_estimates),
                "truth": truth * 2,
            }
        )
        path = tmp_path / f"{method}.parquet"
        est.to_parquet(path)
        runs.append({"dataset": "gsm", "split": "interpolation", "n": 10, "method": method, "path": path})
    cells = cell_metrics(runs).set_index("method")
    # trial taus: 4/6 and 0 (constant estimates count as 0); 1 and -1
    assert cells.loc["random_sampling", "tau"] == pytest.approx(2 / 6)
    assert cells.loc["random_sampling", "tau_se"] == pytest.approx(np.std([4 / 6, 0], ddof=1) / np.sqrt(2))
    assert cells.loc["lasso", "tau"] == pytest.approx(0.0) and cells.loc["lasso", "tau_se"] == pytest.approx(1.0)
    md = kendall_tau_markdown(cells.reset_index(), ["interpolation"], [10], {"gsm": "HELM-GSM8K"})
    assert "## Kendall's tau, interpolation split, n = 10" in md and "| HELM-GSM8K | 0.333 | 0.000 |" in md
