"""The MDAD paper's selectors (benchcast.methods.micro_benchmarks): known answers and invariants."""

import numpy as np
import pytest

from benchcast.methods import make_method
from benchcast.methods.micro_benchmarks import proportional_allocation
from benchcast.oracle import Oracle


def _scores(n_models=40, n_items=90, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n_models, n_items)) < rng.random((n_models, 1))).astype(float)


def test_subtask_equal_quotas():
    source = _scores()
    groups = np.repeat(["a", "b", "c"], 30)
    for seed in range(20):
        m = make_method("random_subtask_equal").fit(source, 7, np.random.default_rng(seed), groups=groups)
        per_group = sorted(np.bincount(np.unique(groups, return_inverse=True)[1][m.coreset_], minlength=3))
        assert per_group == [2, 2, 3] and len(set(m.coreset_)) == 7
    # a subtask shorter than its share gives all it has; the rest comes from the others
    short = np.repeat(["a", "b", "c"], [5, 40, 45])
    for seed in range(10):
        m = make_method("random_subtask_equal").fit(source, 30, np.random.default_rng(seed), groups=short)
        counts = np.bincount(np.unique(short, return_inverse=True)[1][m.coreset_])
        assert len(set(m.coreset_)) == 30 and counts[0] == 5 and abs(counts[1] - counts[2]) <= 1
    # without subtasks: k distinct items, the plain mean
    m = make_method("random_subtask_equal").fit(source, 9, np.random.default_rng(1))
    target = _scores(5, 90, 2)
    assert np.allclose(m.estimate(Oracle(target, 9), None), target[:, m.coreset_].mean(axis=1))


@pytest.mark.parametrize(
    "sizes,k,expected",
    [
        ([50, 30, 20], 10, [5, 3, 2]),  # exact shares
        ([3, 3, 4], 5, [1, 2, 2]),  # 1.5, 1.5, 2 round to 2, 2, 2: the first stratum rounded up gives one back
        ([5, 5, 5, 5], 2, [0, 0, 0, 0]),  # 0.5 rounds half to even: the shortfall is drawn afterwards
        ([1, 99], 50, [0, 50]),  # 0.5 -> 0, 49.5 -> 50
        ([2, 2], 3, [1, 2]),  # 1.5 -> 2 twice: the first gives one back
    ],
)
def test_proportional_allocation(sizes, k, expected):
    alloc = proportional_allocation(np.array(sizes), k)
    assert alloc.tolist() == expected and alloc.sum() <= k


def test_stratified_never_exceeds_k_and_weights_are_inverse_inclusion():
    source = _scores(30, 120, 3)
    for k in (3, 10, 17, 50):
        for seed in range(5):
            m = make_method("stratified_confidence").fit(source, k, np.random.default_rng(seed))
            assert len(m.coreset_) == k == len(set(m.coreset_))
            assert np.all(m.weights_ > 0)


def test_stratified_horvitz_thompson_is_unbiased():
    """Two strata by source accuracy (items 0-59 easy, 60-99 hard), exact allocations 6 + 4 at
    k = 10: the HT mean over draws is the target's mean over all items."""
    source = np.zeros((20, 100))
    source[:, :60] = 1.0
    target = (np.random.default_rng(7).random((3, 100)) < 0.4).astype(float)
    draws = []
    for seed in range(800):
        m = make_method("stratified_confidence").fit(source, 10, np.random.default_rng(seed))
        draws.append(m.estimate(Oracle(target, 10), None))
    draws = np.array(draws)
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - target.mean(axis=1)) < 4 * se)
    m = make_method("stratified_confidence").fit(source, 10, np.random.default_rng(0))
    assert np.allclose(np.sort(m.weights_), np.sort([1 / (100 * 0.1)] * 10))  # pi = 6/60 = 4/40


def test_tinybenchmarks_is_the_irt_core_set_weighted_mean():
    from benchcast.methods.irt_methods import fit_trial_irt

    source = _scores(40, 60, 4)
    fit = fit_trial_irt(source, np.random.default_rng(0), {"dims": 2}, with_bias=False)
    tiny = make_method("tinybenchmarks", {"irt": {"dims": 2}}).fit(source, 8, np.random.default_rng(5), prefit=fit)
    pirt = make_method("p_irt", {"irt": {"dims": 2}}).fit(source, 8, np.random.default_rng(5), prefit=fit)
    assert np.array_equal(tiny.anchors_, pirt.anchors_)
    assert tiny.weights_.sum() == pytest.approx(1.0)
    target = _scores(6, 60, 6)
    assert np.allclose(tiny.estimate(Oracle(target, 8), None), target[:, tiny.anchors_] @ tiny.weights_)


def test_monomial_order_is_graded_by_the_largest_exponent():
    from benchcast.methods.micro_benchmarks import monomial_order

    assert monomial_order(5, 2).tolist() == [[0, 0], [0, 1], [1, 0], [1, 1], [0, 2]]
    order = monomial_order(200, 4)  # layers 0..3: 1 + 15 + 65 + 175 tuples, the first 200 kept
    assert len(order) == 200 and len({tuple(t) for t in order}) == 200
    assert order.max(axis=1).tolist() == sorted(order.max(axis=1).tolist())


def test_projection_dpp_inclusion_frequencies_match_the_kernel_diagonal():
    from benchcast.methods.micro_benchmarks import sample_projection_dpp

    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.standard_normal((25, 4)))[0]
    diagonal = (basis**2).sum(axis=1)
    draws = 3000
    counts = np.zeros(25)
    for _ in range(draws):
        picked = sample_projection_dpp(basis, rng)
        assert len(set(picked)) == 4
        counts[picked] += 1
    se = np.sqrt(diagonal * (1 - diagonal) / draws)
    assert np.all(np.abs(counts / draws - diagonal) < 4.5 * se + 1e-3)


def test_dpp_picks_exactly_k_items_and_keeps_all_when_trimming_leaves_too_few():
    source = _scores(30, 80, 8)
    for k in (3, 20, 70):
        m = make_method("dpp").fit(source, k, np.random.default_rng(k))
        assert len(m.coreset_) == k == len(set(m.coreset_))
    # trimming 20% tails of 4 components leaves fewer than 70 of 80 items: none is trimmed then
    m = make_method("dpp", {"trim": 0.2}).fit(source, 70, np.random.default_rng(0))
    assert len(set(m.coreset_)) == 70
    assert len(set(make_method("dpp", {"trim": 0.2}).fit(source, 20, np.random.default_rng(0)).coreset_)) == 20
    target = _scores(4, 80, 9)
    assert np.allclose(m.estimate(Oracle(target, 70), None), target[:, m.coreset_].mean(axis=1))
