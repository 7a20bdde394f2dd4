"""Tests for the k-medoids anchor selection and Anchor-Points-Weighted / -Predictor (eqs. 9-11).

References are loop transcriptions of the paper's code (``benchpred/anchor_points.py``):
``np.linalg.lstsq`` per (floater, anchor) pair, per-item ``argmax`` for cluster sizes.
"""

from __future__ import annotations

import kmedoids
import numpy as np
import pytest
from simdata import logistic_scores
from threadpoolctl import threadpool_limits

from benchcast.errors import BudgetExceeded, ConfigError
from benchcast.methods import REGISTRY, make_method
from benchcast.methods.anchor_points import AnchorPointsPredictor, AnchorPointsWeighted, anchor_regression
from benchcast.methods.anchors import (
    AnchorSelection,
    assign_to_anchors,
    cluster_weights,
    dedupe_medoids,
    draw_seed,
    item_correlations,
    kmedoids_anchors,
    select_anchors,
)
from benchcast.oracle import Oracle


@pytest.fixture(autouse=True)
def _single_blas_thread():
    with threadpool_limits(limits=1):
        yield


# --------------------------------------------------------------------------- data


def clustered(sizes=(3, 7, 12, 20), n_models=40, noise=0.05, seed=0):
    """Items that are noisy copies of one of ``len(sizes)`` random prototypes (shuffled order).

    Returns ``scores (n_models, N)`` in [0, 1] and each item's group.
    """
    rng = np.random.default_rng(seed)
    protos = rng.normal(size=(len(sizes), n_models))
    group = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    x = protos[group].T + noise * rng.normal(size=(n_models, group.size))
    return 1.0 / (1.0 + np.exp(-x)), group


def paper_weights(source, anchors):
    """The paper's cluster-size loop (argmax of corrs[anchors], np.unique, zero-insertion)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        corrs = np.corrcoef(source, rowvar=False)
        corrs[np.isnan(corrs)] = 0.0
    members = np.argmax(corrs[list(anchors), :], axis=0)
    unique, sizes = np.unique(members, return_counts=True)
    sizes = list(sizes)
    for i in range(len(anchors)):
        if i not in unique:
            sizes.insert(i, 0)
    return np.asarray(sizes) / np.sum(sizes)


def paper_predictor(source, anchors):
    """The paper's per-pair lstsq loop; returns (floaters, M, B, resid, nearest)."""
    n_items = source.shape[1]
    floaters = np.array([i for i in range(n_items) if i not in list(anchors)])
    M = np.zeros((len(floaters), len(anchors)))
    B, R = np.zeros_like(M), np.zeros_like(M)
    for j, a in enumerate(anchors):
        A = np.vstack([source[:, a], np.ones(source.shape[0])]).T
        for i, f in enumerate(floaters):
            theta = np.linalg.lstsq(A, source[:, f], rcond=None)[0]
            M[i, j], B[i, j] = theta
            R[i, j] = ((A @ theta - source[:, f]) ** 2).sum()
    return floaters, M, B, R, np.argmin(R, axis=1)


# --------------------------------------------------------------------------- anchors module


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("absolute", [False, True])
def test_kmedoids_recovers_known_clusters(seed, absolute):
    sizes = (3, 7, 12, 20)
    scores, group = clustered(sizes, seed=seed)
    sel = select_anchors(scores, len(sizes), np.random.default_rng(100 + seed), absolute=absolute)
    assert isinstance(sel, AnchorSelection)
    anchor_groups = group[sel.anchors]
    assert sorted(anchor_groups.tolist()) == list(range(len(sizes)))  # one medoid per group
    np.testing.assert_array_equal(anchor_groups[sel.membership], group)  # memberships = groups
    np.testing.assert_allclose(sel.weights, np.asarray(sizes)[anchor_groups] / group.size, rtol=0, atol=1e-15)


@pytest.mark.parametrize("init", ["random", "build", "first"])
def test_kmedoids_anchors_other_inits_recover_clusters(init):
    sizes = (4, 9, 15)
    scores, group = clustered(sizes, seed=7)
    diss = 1.0 - item_correlations(scores)
    anchors = kmedoids_anchors(diss, 3, np.random.default_rng(0), init=init)
    assert sorted(group[anchors].tolist()) == [0, 1, 2]


def test_kmedoids_anchors_seed_drawn_from_rng():
    scores = logistic_scores(30, 80, seed=1)
    diss = 1.0 - item_correlations(scores)
    seed = int(np.random.default_rng(5).integers(0, 2**31 - 1))
    assert draw_seed(np.random.default_rng(5)) == seed
    ref = kmedoids.fasterpam(diss, 10, max_iter=100, init="random", random_state=seed, n_cpu=1).medoids
    got = kmedoids_anchors(diss, 10, np.random.default_rng(5))
    np.testing.assert_array_equal(got, list(set(ref)))
    with pytest.raises(ValueError):
        kmedoids_anchors(diss, 10, np.random.default_rng(5), init="kmeans++")


def test_item_correlations_constant_items_and_absolute():
    scores = logistic_scores(20, 15, seed=2)
    scores[:, 3] = 1.0
    scores[:, 8] = 0.0
    c = item_correlations(scores)
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.corrcoef(scores, rowvar=False)
    ref[np.isnan(ref)] = 0.0
    np.testing.assert_array_equal(c, ref)
    assert (c[3] == 0).all() and (c[:, 8] == 0).all()  # diagonal included
    np.testing.assert_array_equal(item_correlations(scores, absolute=True), np.abs(ref))


def test_dedupe_keeps_python_set_order():
    medoids = np.array([300, 5, 1000, 44, 5, 129, 1], dtype=np.uint64)
    np.testing.assert_array_equal(dedupe_medoids(medoids), list(set(medoids)))
    assert len(dedupe_medoids(medoids)) == 6


def test_assignment_ties_go_to_first_anchor_and_empty_clusters_weigh_zero():
    sim = np.array([[0.5, 0.0, 0.2, 0.9], [0.5, 0.0, 0.3, 0.9], [0.1, 0.0, 0.1, 0.1]])
    members = assign_to_anchors(sim)
    np.testing.assert_array_equal(members, [0, 0, 1, 0])
    np.testing.assert_array_equal(cluster_weights(members, 3), [0.75, 0.25, 0.0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_select_anchors_weights_equal_paper_loop_with_constant_items(seed):
    scores = logistic_scores(25, 120, seed=seed)
    scores[:, [4, 50, 51]] = 1.0  # constant items
    scores[:, 60] = 0.0
    sel = select_anchors(scores, 12, np.random.default_rng(seed))
    np.testing.assert_allclose(sel.weights, paper_weights(scores, sel.anchors), rtol=0, atol=1e-15)
    assert (sel.membership[[4, 50, 51, 60]] == 0).all()  # corr 0 everywhere: first anchor


# --------------------------------------------------------------------------- Anchor-Points-Weighted


def test_weighted_estimate_is_cluster_size_weighted_sum_on_known_clusters():
    sizes = (5, 8, 13, 21, 2)
    scores, group = clustered(sizes, n_models=50, seed=11)
    src, tgt = scores[:40], scores[40:]
    m = make_method("anchor_points_weighted").fit(src, len(sizes), np.random.default_rng(3))
    assert sorted(group[m.coreset_].tolist()) == list(range(len(sizes)))
    oracle = Oracle(tgt, len(sizes))
    est = m.estimate(oracle, np.random.default_rng(0))
    by_hand = np.zeros(len(tgt))
    for a in m.coreset_:
        by_hand += sizes[group[a]] / group.size * tgt[:, a]
    np.testing.assert_allclose(est, by_hand, rtol=0, atol=1e-14)
    assert (oracle.spent == len(sizes)).all()


@pytest.mark.parametrize("n", [5, 20])
def test_weighted_estimate_matches_paper_loop_and_budget(n):
    scores = logistic_scores(50, 90, seed=n)
    src, tgt = scores[:38], scores[38:]
    m = make_method("anchor_points_weighted").fit(src, n, np.random.default_rng(n))
    assert len(m.coreset_) <= n and len(np.unique(m.coreset_)) == len(m.coreset_)
    weights = paper_weights(src, m.coreset_)
    oracle = Oracle(tgt, n)
    est = m.estimate(oracle, None)
    np.testing.assert_allclose(est, (tgt[:, m.coreset_] * weights).sum(1), rtol=0, atol=1e-13)
    assert (oracle.spent <= n).all()
    with pytest.raises(BudgetExceeded):
        m.estimate(Oracle(tgt, len(m.coreset_) - 1), None)


# --------------------------------------------------------------------------- Anchor-Points-Predictor


def test_anchor_regression_equals_lstsq_loop_with_constant_columns():
    rng = np.random.default_rng(4)
    n_models = 23
    S = np.concatenate([rng.random((n_models, 10)), (rng.random((n_models, 10)) < 0.4).astype(float)], axis=1)
    S[:, 2] = 1.0  # constant anchors (0, 1, 0.3, near-constant)
    S[:, 5] = 0.0
    S[:, 7] = 0.3
    S[:, 9] = 0.3
    S[0, 9] = np.nextafter(0.3, 1.0)  # 1 ulp off: lstsq calls it rank-deficient
    S[:, 14] = 1.0  # constant floaters
    S[:, 17] = 0.7
    anchors = [9, 2, 5, 7, 0, 11, 13]
    floaters, slopes, intercepts, rss = anchor_regression(S, anchors)
    ref_f, ref_m, ref_b, ref_r, _ = paper_predictor(S, anchors)
    np.testing.assert_array_equal(floaters, ref_f)
    np.testing.assert_allclose(slopes, ref_m, rtol=0, atol=1e-10)
    np.testing.assert_allclose(intercepts, ref_b, rtol=0, atol=1e-10)
    np.testing.assert_allclose(rss, ref_r, rtol=0, atol=1e-10)
    # a constant column c: minimum-norm (m, b) = mean(y) (c, 1) / (c^2 + 1)
    j = anchors.index(2)
    ybar = S[:, floaters].mean(0)
    np.testing.assert_allclose(slopes[:, j], ybar / 2, atol=1e-12)
    np.testing.assert_allclose(intercepts[:, j], ybar / 2, atol=1e-12)


def test_anchor_regression_assignment_equals_lstsq_loop():
    S = np.random.default_rng(8).random((30, 60))
    anchors = [3, 17, 29, 40, 41, 55]
    floaters, slopes, intercepts, rss = anchor_regression(S, anchors)
    _, ref_m, ref_b, ref_r, ref_nearest = paper_predictor(S, anchors)
    np.testing.assert_array_equal(np.argmin(rss, axis=1), ref_nearest)


@pytest.mark.parametrize("n", [4, 12])
def test_predictor_estimate_equals_paper_code(n):
    scores = np.random.default_rng(n).random((45, 50))
    src, tgt = scores[:35], scores[35:]
    m = make_method("anchor_points_predictor").fit(src, n, np.random.default_rng(1))
    anchors = m.coreset_
    _, M, B, _, nearest = paper_predictor(src, anchors)
    onehot = np.zeros_like(M)
    onehot[np.arange(len(nearest)), nearest] = 1
    ref = np.array([((M * row[anchors][None, :] + B) * onehot).sum(1).mean() for row in tgt])
    oracle = Oracle(tgt, n)
    np.testing.assert_allclose(m.estimate(oracle, None), ref, rtol=0, atol=1e-12)
    assert (oracle.spent == len(anchors)).all() and len(anchors) <= n


def test_predictor_excludes_anchor_scores_from_the_mean():
    # items 0-9 are copies of one column, items 10 and 11 are unrelated: the anchors are one
    # copy, 10 and 11; every floater is a copy, predicted by the copy anchor with m=1, b=0
    rng = np.random.default_rng(0)
    S = np.concatenate([np.repeat(rng.random((30, 1)), 10, axis=1), rng.random((30, 2))], axis=1)
    m = make_method("anchor_points_predictor").fit(S, 3, np.random.default_rng(0))
    copy_anchor = [a for a in m.coreset_ if a < 10]
    assert sorted(m.coreset_.tolist()) == sorted(copy_anchor + [10, 11]) and len(copy_anchor) == 1
    tgt = np.full((1, 12), 0.5)
    tgt[0, copy_anchor[0]], tgt[0, 10], tgt[0, 11] = 0.25, 0.9, 0.9
    est = m.estimate(Oracle(tgt, 3), None)
    assert est[0] == pytest.approx(0.25, abs=1e-12)  # not (9 * 0.25 + 0.25 + 2 * 0.9) / 12


# --------------------------------------------------------------------------- both methods


@pytest.mark.parametrize("name", ["anchor_points_weighted", "anchor_points_predictor"])
def test_registration_params_and_determinism(name):
    assert name in REGISTRY
    m = make_method(name)
    assert isinstance(m, (AnchorPointsWeighted, AnchorPointsPredictor))
    assert m.name == name and not m.deterministic_fit and not m.uses_coreset_stream
    assert m.params() == {"init": "random", "max_iter": 100, "n_cpu": 1}
    assert make_method(name, {"init": "build", "max_iter": 5}).params()["init"] == "build"
    with pytest.raises(ConfigError):
        make_method(name, {"init": "kmeans++"})
    scores = logistic_scores(40, 70, seed=3)
    src, tgt = scores[:30], scores[30:]
    a = make_method(name).fit(src, 9, np.random.default_rng(42))
    b = make_method(name).fit(src, 9, np.random.default_rng(42))
    np.testing.assert_array_equal(a.coreset_, b.coreset_)
    np.testing.assert_array_equal(a.estimate(Oracle(tgt, 9), None), b.estimate(Oracle(tgt, 9), None))
    with pytest.raises(BudgetExceeded):
        make_method(name).fit(src, 70, np.random.default_rng(0))


def test_dissimilarity_is_cached_for_a_repeated_source_and_selection_is_unchanged():
    from benchcast.methods import anchors as A

    rng = np.random.default_rng(3)
    source = (rng.random((30, 60)) < 0.5).astype(float)
    A._DISSIMILARITY_CACHE.clear()
    first = A.select_anchors(source, 8, np.random.default_rng(0))
    d1 = A.item_dissimilarity(source)
    assert A.item_dissimilarity(source.copy()) is d1  # same content -> cache hit
    assert not d1.flags.writeable
    np.testing.assert_array_equal(d1, 1.0 - A.item_correlations(source))
    second = A.select_anchors(source, 8, np.random.default_rng(0))
    np.testing.assert_array_equal(first.anchors, second.anchors)
    np.testing.assert_array_equal(first.weights, second.weights)
    other = source.copy()
    other[0, 0] = 1 - other[0, 0]
    assert A.item_dissimilarity(other) is not d1  # different content -> recomputed
    assert A.item_dissimilarity(source, absolute=True) is not d1


# --------------------------------------------------------------------------- fused / column-major fast path


def _binary_with_constants(n_models, n_items, seed):
    scores = logistic_scores(n_models, n_items, seed=seed)
    scores[:, [1, n_items // 2]] = 1.0  # constant items
    scores[:, n_items - 3] = 0.0
    scores[:, 7] = scores[:, 8]  # duplicate items (ties)
    return scores


def _reference_corr(scores, absolute):
    """The unfused NumPy steps the paper's code runs: corrcoef, NaN -> 0, optional |.|."""
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.corrcoef(scores, rowvar=False)
    corr = np.nan_to_num(corr, nan=0.0)
    return np.abs(corr) if absolute else corr


@pytest.mark.parametrize("tile,block", [(128, 1 << 16), (7, 50), (1, 1)])
@pytest.mark.parametrize("absolute", [False, True])
def test_fused_correlations_are_bit_identical_to_numpy_steps(monkeypatch, tile, block, absolute):
    from benchcast.methods import anchors as A

    monkeypatch.setattr(A, "_TILE", tile)  # tiles/blocks that do not divide N
    monkeypatch.setattr(A, "_BLOCK_ELEMENTS", block)
    A._DISSIMILARITY_CACHE.clear()
    cases = [np.random.default_rng(2).random((12, 45))]
    if tile > 1:  # (tile 1 on 300 items: 45,000 tile pairs, slow)
        cases.append(_binary_with_constants(31, 300, seed=5))
    for scores in cases:
        ref = _reference_corr(scores, absolute)
        corr = A.item_correlations(scores, absolute=absolute)
        assert corr.flags.c_contiguous
        np.testing.assert_array_equal(corr, ref)  # bit for bit, not allclose
        diss = A.item_dissimilarity(scores, absolute=absolute)
        assert diss.flags.f_contiguous and not diss.flags.writeable
        np.testing.assert_array_equal(diss, 1.0 - ref)
    A._DISSIMILARITY_CACHE.clear()


def test_fasterpam_on_column_major_dissimilarity_equals_row_major():
    from benchcast.methods import anchors as A

    scores = _binary_with_constants(30, 400, seed=9)
    A._DISSIMILARITY_CACHE.clear()
    diss = A.item_dissimilarity(scores)
    ref_diss = np.ascontiguousarray(1.0 - _reference_corr(scores, False))
    assert not np.array_equal(ref_diss, ref_diss.T)  # not symmetric: the layout must not be a transpose
    for n, seed in [(5, 1), (20, 2), (60, 3)]:
        ref = kmedoids.fasterpam(ref_diss, n, max_iter=100, init="random", random_state=seed, n_cpu=1)
        got = kmedoids.fasterpam(diss, n, max_iter=100, init="random", random_state=seed, n_cpu=1)
        np.testing.assert_array_equal(got.medoids, ref.medoids)
        np.testing.assert_array_equal(got.labels, ref.labels)
        assert got.loss == ref.loss
    A._DISSIMILARITY_CACHE.clear()


@pytest.mark.parametrize("absolute", [False, True])
@pytest.mark.parametrize("n,seed", [(10, 0), (40, 1)])
def test_select_anchors_equals_straightforward_reference(absolute, n, seed):
    from benchcast.methods import anchors as A

    scores = _binary_with_constants(35, 260, seed=seed)
    A._DISSIMILARITY_CACHE.clear()
    sel = select_anchors(scores, n, np.random.default_rng(seed), absolute=absolute)
    corr = _reference_corr(scores, absolute)
    rng = np.random.default_rng(seed)
    medoids = kmedoids.fasterpam(
        1.0 - corr, n, max_iter=100, init="random", random_state=int(rng.integers(0, 2**31 - 1)), n_cpu=1
    ).medoids
    anchors = np.array(list(set(int(m) for m in medoids)))
    np.testing.assert_array_equal(sel.anchors, anchors)
    np.testing.assert_array_equal(sel.membership, np.argmax(corr[anchors], axis=0))
    np.testing.assert_allclose(
        sel.weights,
        paper_weights(scores, anchors)
        if not absolute
        else np.bincount(np.argmax(corr[anchors], axis=0), minlength=len(anchors)) / scores.shape[1],
        rtol=0,
        atol=1e-15,
    )
    A._DISSIMILARITY_CACHE.clear()


def test_kmedoids_import_does_not_load_scikit_learn():
    """Anchor-Points jobs call only kmedoids.fasterpam; the package's optional scikit-learn
    import (~0.6 s a job) is skipped, and scikit-learn still imports normally afterwards."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from benchcast.methods.anchors import select_anchors; "
        "sel = select_anchors(np.random.default_rng(0).random((20, 30)).round(), 4, np.random.default_rng(1)); "
        "assert 'sklearn' not in sys.modules and len(sel.anchors) >= 1; "
        "import sklearn.cluster; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "ok"
