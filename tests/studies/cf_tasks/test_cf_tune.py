"""The CF hyper-parameters' inner validation (benchcast.studies.cf_tasks.tune): it reads only the
initial models, each step takes its grid's best value, and the chosen settings round-trip."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from benchcast.data.task_matrix import TaskMatrix
from benchcast.methods.collaborative_filtering import CFSettings
from benchcast.studies.cf_tasks.protocol import make_split
from benchcast.studies.cf_tasks.tune import ORDER, _InnerRun, chosen_settings, inner_split, repeat_settings, tune
from benchcast.trials.tasks import task_budgets

GRID = {"n_similar": [4, 8], "alpha": [0.25, 0.75], "tau1": [1, 4], "tau0": [0.0, 0.9]}


def toy(seed=0, n_models=64, sizes=(40, 30, 24)):
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=(n_models, 1)) + 0.5 * rng.normal(size=(n_models, len(sizes)))
    tasks = np.repeat(np.arange(len(sizes)), sizes)
    logits = ability[:, tasks] - rng.normal(size=len(tasks))
    scores = (rng.random(logits.shape) < 1 / (1 + np.exp(-logits))).astype(float)
    names = [f"m{i}" for i in range(n_models)]
    return TaskMatrix("toy", scores, tasks, ["a", "b", "c"], names, np.arange(n_models, dtype=float))


@pytest.mark.parametrize("kind", ["date", "random"])
def test_the_choice_does_not_change_when_the_new_models_answers_are_permuted(kind):
    matrix = toy()
    outer = make_split(matrix, kind, 1, 0, 0.75)
    budgets = task_budgets(matrix.task_sizes, 0.25, floor=8)
    chosen, sweep = tune(matrix, outer, budgets, CFSettings(), GRID, 0, 1)
    shuffled = matrix.scores.copy()
    rng = np.random.default_rng(9)
    for row in outer.new:  # every new model's answers shuffled across items, and the rows swapped
        shuffled[row] = rng.permutation(shuffled[row])
    shuffled[outer.new] = shuffled[rng.permutation(outer.new)]
    again, sweep_again = tune(replace(matrix, scores=shuffled), outer, budgets, CFSettings(), GRID, 0, 1)
    assert again == chosen
    pd.testing.assert_frame_equal(sweep, sweep_again)
    # ... while the initial models' answers do matter
    changed = matrix.scores.copy()
    changed[outer.initial] = 1 - changed[outer.initial]
    _, sweep_changed = tune(replace(matrix, scores=changed), outer, budgets, CFSettings(), GRID, 0, 1)
    assert not np.allclose(sweep.mae, sweep_changed.mae)


def test_inner_split_stays_inside_the_initial_models_and_keeps_the_date_order():
    matrix = toy()
    outer = make_split(matrix, "date", 0, 0, 0.75)
    inner = inner_split(matrix, outer, 0.75, np.random.default_rng(0))
    assert set(inner.initial) | set(inner.new) == set(outer.initial) and not set(inner.initial) & set(inner.new)
    assert matrix.release[inner.initial].max() < matrix.release[inner.new].min()
    random_outer = make_split(matrix, "random", 0, 0, 0.75)
    random_inner = inner_split(matrix, random_outer, 0.75, np.random.default_rng(0))
    assert set(random_inner.initial) | set(random_inner.new) == set(random_outer.initial)


def test_each_step_takes_its_best_value_in_figure_9_order_and_the_choice_round_trips():
    matrix = toy(1)
    outer = make_split(matrix, "date", 0, 0, 0.75)
    budgets = task_budgets(matrix.task_sizes, 0.25, floor=8)
    chosen, sweep = tune(matrix, outer, budgets, CFSettings(), GRID, 0, 0)
    assert list(dict.fromkeys(sweep.param)) == [p for p in ORDER if p in GRID]
    current = CFSettings()
    run = _InnerRun(matrix, inner_split(matrix, outer, 0.75, _rng(matrix)), budgets, (0, 0))
    for _, rows in sweep.groupby("step", sort=True):
        name = rows.param.iloc[0]
        expect = [run.score(replace(current, **{name: v}))["mae"] for v in GRID[name]]
        assert np.allclose(rows.mae, expect)  # each value scored with the earlier choices in place
        assert rows.chosen.sum() == 1 and rows.mae[rows.chosen].iloc[0] == min(expect)
        current = replace(current, **{name: type(getattr(current, name))(rows.value[rows.chosen].iloc[0])})
    assert current == chosen == chosen_settings(sweep, CFSettings())
    per_repeat = repeat_settings([sweep], 3, {"oversample": False})
    assert len(per_repeat) == 3 and all(
        s["oversample"] is False and s["n_similar"] == chosen.n_similar for s in per_repeat
    )
    with pytest.raises(ValueError, match="cannot tune"):
        tune(matrix, outer, budgets, CFSettings(), {"neighbours": [1, 2]}, 0, 0)


def _rng(matrix):
    from benchcast import seeding

    return seeding.rng(0, 0, f"cf_tasks:tune:split:{matrix.name}")
