"""The IRT prefit of the CF study: one fit per task and repeat (one per task under the date split),
anchors for every ratio's budget, read by P-IRT and GP-IRT at every ratio."""

import numpy as np
from helpers import REPO

from benchcast.data.task_matrix import TaskMatrix
from benchcast.studies.cf_tasks.protocol import irt_prefit, prefit_trial, run_cell
from benchcast.trials.tasks import task_budgets

SETTINGS = {"irt": {"dims": 2}, "with_bias": True, "share_identical_sources": True}


def toy(n_models=48, sizes=(40, 30, 8)):
    rng = np.random.default_rng(2)
    ability = rng.normal(size=(n_models, 1))
    tasks = np.repeat(np.arange(len(sizes)), sizes)
    scores = (rng.random((n_models, len(tasks))) < 1 / (1 + np.exp(rng.normal(size=len(tasks)) - ability))).astype(
        float
    )
    names = [f"m{i}" for i in range(n_models)]
    return TaskMatrix("toy", scores, tasks, ["a", "b", "c"], names, np.arange(n_models, dtype=float))


def test_date_split_shares_one_fit_per_task_with_anchors_for_every_ratio():
    matrix = toy()
    ratios = [0.3, 0.5]
    result = irt_prefit(matrix, "date", 3, 0, SETTINGS, ratios, floor=10)
    # task c (8 items, under the floor) is measured whole at both ratios: no fit
    assert set(result.fits) == {prefit_trial(r, t) for r in range(3) for t in (0, 1)}
    for t in (0, 1):
        fits = [result.fits[prefit_trial(r, t)] for r in range(3)]
        assert {f.shared_from for f in fits} == {prefit_trial(0, t)}
        assert np.array_equal(fits[0].disc, fits[2].disc)
        wanted = {int(task_budgets(matrix.task_sizes, ratio, 10)[t]) for ratio in ratios}
        assert set(fits[0].anchors) == wanted


def test_irt_methods_read_the_prefit_and_spend_each_budget():
    matrix = toy()
    random_fits = irt_prefit(matrix, "random", 2, 0, SETTINGS, [0.3], floor=10)
    assert len({random_fits.fits[prefit_trial(r, 0)].shared_from for r in range(2)}) == 2  # other initial models
    for method in ("p_irt", "gp_irt"):
        runs, metrics = run_cell(
            matrix, "random", method, {"irt": {"dims": 2}}, 0.3, 2, 0, floor=10, prefit=random_fits
        )
        assert (runs.spent == runs.budget).all() and metrics.mae.lt(0.25).all()
    # with the prefit, P-IRT's anchors are the prefit's k-means anchors of that budget
    from benchcast.methods import make_method

    fit = random_fits.fits[prefit_trial(1, 0)]
    budget = int(task_budgets(matrix.task_sizes, 0.3, 10)[0])
    model = make_method("p_irt", {"irt": {"dims": 2}}).fit(matrix.scores[:, :40], budget, None, prefit=fit)
    assert np.array_equal(model.anchors_, fit.anchors[budget][0])


def test_the_prefit_is_shared_by_every_method_whose_irt_fit_is_the_same_in_other_words():
    """``{}`` and ``{"dims": 10}`` are one fit (10 is the MAP fitter's default): config/cf_tasks.yaml
    spells tinyBenchmarks' one way and P-IRT's and GP-IRT's the other, and the two had each fit
    their own IRT per task and ratio (48 s a job on Open LLM v2 against 0.2 s with the prefit)."""
    from benchcast.data.catalog import load_catalog
    from benchcast.methods.irt_methods import resolved_fit_params
    from benchcast.studies.cf_tasks.jobs import Jobs

    assert resolved_fit_params({}) == resolved_fit_params({"dims": 10, "fitter": "map"})
    assert resolved_fit_params({"dims": 2}) != resolved_fit_params({})
    assert resolved_fit_params({"fitter": "svi"})["epochs"] > 0
    methods = [
        {"name": "tinybenchmarks", "params": {"irt": {"dims": 10}}},
        {"name": "p_irt"},
        {"name": "gp_irt"},
        {"name": "small", "method": "p_irt", "params": {"irt": {"dims": 2}}},
    ]
    config = {
        "matrices": {"toy": {"datasets": ["musr"], "join": "model_id", "release": "none"}},
        "splits": ["random"],
        "ratios": [0.1],
        "trials": 1,
        "methods": methods,
    }
    plan = Jobs(config, load_catalog(REPO / "src" / "benchcast" / "data" / "catalog.yaml"))
    assert [m for m in ("tinybenchmarks", "p_irt", "gp_irt", "small") if plan.uses_irt_prefit(m)] == [
        "tinybenchmarks",
        "p_irt",
        "gp_irt",
    ]
    assert plan.irt_prefit_settings()["with_bias"] is True  # GP-IRT wants the held-out bias
