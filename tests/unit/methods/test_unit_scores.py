"""Item scores in [0, 1] (partial credit, F1): every method declares the scores its estimator is
defined for (``Method.scores``); those that take [0, 1] fit and estimate on such scores, those that
do not stop in one line naming the ones that do."""

from __future__ import annotations

import numpy as np
import pytest

from benchcast.errors import ConfigError
from benchcast.methods import REGISTRY, make_method
from benchcast.methods.base import BINARY, UNIT, methods_taking_unit_scores
from benchcast.oracle import Oracle

SUBTASKS = np.repeat(np.arange(4), 100)


def partial_credit(seed: int = 0, models: int = 60, items: int = 400) -> np.ndarray:
    """Scores in [0, 1] with a model ability and an item difficulty (two dimensions), almost none
    exactly 0 or 1: each a Beta draw around the logistic model's probability."""
    rng = np.random.default_rng(seed)
    ability, difficulty = rng.normal(size=(models, 1)) * 1.2, rng.normal(size=items)
    theta, a = rng.normal(size=(models, 2)), rng.normal(size=(items, 2)) * 0.5
    p = 1 / (1 + np.exp(-(ability - difficulty + theta @ a.T)))
    return rng.beta(6 * p + 0.2, 6 * (1 - p) + 0.2)


def fitted(name: str, source: np.ndarray, budget: int, seed: int = 0):
    m = make_method(name)
    kwargs = {"groups": SUBTASKS[: source.shape[1]]} if m.uses_item_groups else {}
    return m.fit(source, budget, np.random.default_rng(seed), **kwargs)


def test_every_registered_method_declares_the_scores_it_takes():
    assert {cls.scores for cls in REGISTRY.values()} <= {BINARY, UNIT}
    assert {n for n, c in REGISTRY.items() if c.scores == BINARY} == {
        "p_irt",
        "gp_irt",
        "tinybenchmarks",
        "sort_and_search",
    }  # fmt: skip  (a Bernoulli likelihood; a right-then-wrong order)


@pytest.mark.parametrize("name", methods_taking_unit_scores())
def test_a_method_that_takes_partial_credit_estimates_it(name):
    """On 45 source and 15 target models of partial-credit scores, budget 30: finite estimates,
    closer to the true means than guessing the source models' mean for everyone."""
    scores = partial_credit()
    source, targets = scores[:45], scores[45:]
    m = fitted(name, source, 30)
    est = np.asarray(m.estimate(Oracle(targets, 30), np.random.default_rng(1)), dtype=float)
    truth = targets.mean(axis=1)
    assert est.shape == (15,) and np.isfinite(est).all()
    guess = np.abs(source.mean() - truth).mean()
    assert np.abs(est - truth).mean() < 0.6 * guess, (name, np.abs(est - truth).mean(), guess)


def test_random_sampling_is_the_mean_of_the_partial_scores_it_asked():
    scores = partial_credit(1)
    source, targets = scores[:45], scores[45:]
    m = fitted("random_sampling", source, 30)
    oracle = Oracle(targets, 30)
    est = m.estimate(oracle, np.random.default_rng(1))
    asked = m.coreset_
    assert len(asked) == 30 and not np.isin(targets[:, asked], (0.0, 1.0)).any()
    np.testing.assert_array_equal(est, [np.mean(row[asked]) for row in targets])  # each model's answers' mean


@pytest.mark.parametrize("name", ["p_irt", "gp_irt", "tinybenchmarks", "sort_and_search"])
def test_a_zero_one_method_refuses_partial_credit_in_one_line(name):
    with pytest.raises(ConfigError) as info:
        fitted(name, partial_credit()[:45], 30)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{name} is defined for 0/1 item scores only")
    assert ", ".join(methods_taking_unit_scores()) in message


def test_cf_probe_keeps_partial_synthetic_answers_partial():
    """CF's oversampling rounds synthetic answers at 0.5 for 0/1 leaderboards (the paper's setting);
    on partial credit it keeps them as they are."""
    scores = partial_credit()
    assert fitted("cf_probe", scores[:45], 30).cf_.settings.binary is False
    assert fitted("cf_probe", (scores[:45] > 0.5).astype(float), 30).cf_.settings.binary is True
