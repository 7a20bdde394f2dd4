"""BenchPress Section 6.1 hypothesis tests (benchcast.studies.benchpress.hypotheses).

Synthetic matrices with planted effects (near-duplicate benchmarks, cloned models, drifting
benchmark levels) that each test must detect, and null matrices it must not reject. The
predictors are cheap numpy stand-ins for the paper's Bias ALS; one test checks that the
default predictor is the library's.
"""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from scipy import stats

from benchcast.completion.evaluation import Fold
from benchcast.completion.pipeline import predict_scores
from benchcast.studies.benchpress import hypotheses as H

# --------------------------------------------------------------------------- cheap predictors


def _pair_abs_r(X: np.ndarray, min_shared: int) -> np.ndarray:
    """|Pearson r| between all row pairs over shared observed entries (NaN if too few / constant)."""
    O = np.isfinite(X).astype(float)
    Z = np.nan_to_num(X)
    n = O @ O.T
    S = Z @ O.T
    Q = (Z * Z) @ O.T
    C = Z @ Z.T
    with np.errstate(invalid="ignore", divide="ignore"):
        va = Q - S * S / n
        cov = C - S * S.T / n
        r = np.abs(cov / np.sqrt(va * va.T))
    r[(n < min_shared) | ~(va > 1e-9) | ~(va.T > 1e-9)] = np.nan
    np.fill_diagonal(r, np.nan)
    return r


def _additive(X: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cm = np.nanmean(X, axis=0)
        ro = np.nanmean(X - cm, axis=1)
    return cm[None, :] + np.nan_to_num(ro)[:, None]


def additive_batch(Ms):
    """Column mean + model offset."""
    return np.stack([np.where(np.isnan(X), _additive(X), X) for X in Ms])


def neighbor_regression_batch(Ms, min_r=0.5):
    """A missing cell is regressed on the model's score on the most correlated benchmark
    (|r| > min_r over >= 5 shared models); otherwise the column mean."""
    out = []
    for X in Ms:
        obs = np.isfinite(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            cm = np.nanmean(X, axis=0)
        R = _pair_abs_r(X.T, 5)
        P = X.copy()
        for j in range(X.shape[1]):
            miss = ~obs[:, j]
            if not miss.any():
                continue
            pred = np.full(X.shape[0], cm[j])
            row = np.where(np.isfinite(R[j]), R[j], -1.0)
            b = int(np.argmax(row))
            if row[b] > min_r:
                sh = obs[:, j] & obs[:, b]
                slope, icpt = np.polyfit(X[sh, b], X[sh, j], 1)
                use = miss & obs[:, b]
                pred[use] = icpt + slope * X[use, b]
            P[miss, j] = pred[miss]
        out.append(P)
    return np.stack(out)


def peer_copy_batch(Ms, min_r=0.5):
    """A missing cell is the most correlated peer model's score there (shifted by the mean
    difference on shared benchmarks); otherwise column mean + model offset."""
    out = []
    for X in Ms:
        obs = np.isfinite(X)
        R = _pair_abs_r(X, 3)
        P = np.where(obs, X, _additive(X))
        for i in range(X.shape[0]):
            miss = np.flatnonzero(~obs[i])
            if not miss.size:
                continue
            order = [p for p in np.argsort(-np.nan_to_num(R[i], nan=-1.0)) if np.isfinite(R[i, p]) and R[i, p] > min_r]
            for j in miss:
                for p in order:
                    if obs[p, j]:
                        sh = obs[i] & obs[p]
                        P[i, j] = X[p, j] + np.mean(X[i, sh] - X[p, sh])
                        break
        out.append(P)
    return np.stack(out)


def constant_spy_batch(Ms):
    """Missing cells -> -1000: a held-out cell that leaked into training would score 0 error."""
    return np.stack([np.where(np.isnan(X), -1000.0, X) for X in Ms])


# --------------------------------------------------------------------------- synthetic data


def _mask(rng, shape, frac, min_row, min_col):
    while True:
        hide = rng.random(shape) < frac
        if ((~hide).sum(1) >= min_row).all() and ((~hide).sum(0) >= min_col).all():
            return hide


def bench_data(duplicates: bool, seed=0, n_models=40, n_base=6):
    """12 benchmarks; with ``duplicates`` column c + 6 is column c plus small noise (|r| ~ 0.99)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(50, 12, size=(n_models, n_base))
    second = base + rng.normal(0, 1, size=base.shape) if duplicates else rng.normal(50, 12, size=base.shape)
    M = np.hstack([base, second])
    M[_mask(rng, M.shape, 0.15, 4, 8)] = np.nan
    return M


def model_data(clones: bool, seed=1, n_bench=14):
    """30 models: with ``clones`` rows 10-19 copy rows 0-9 plus small noise; else all independent."""
    rng = np.random.default_rng(seed)
    base = rng.normal(50, 15, size=(10, n_bench))
    twin = base + rng.normal(0, 1, size=base.shape) if clones else rng.normal(50, 15, size=base.shape)
    M = np.vstack([base, twin, rng.normal(50, 15, size=(10, n_bench))])
    M[_mask(rng, M.shape, 0.1, 8, 4)] = np.nan
    return M


def simple_folds(M, n_seeds=2, n_folds=3, seed=0):
    rng = np.random.default_rng(seed)
    obs = np.isfinite(M)
    folds = []
    for s in range(n_seeds):
        assign = {}
        for i in range(M.shape[0]):
            js = rng.permutation(np.flatnonzero(obs[i]))
            for k in range(n_folds):
                assign.setdefault(k, []).extend((i, j) for j in js[k::n_folds])
        folds += [Fold(seed=s, fold=k, cells=np.array(c)) for k, c in assign.items()]
    return folds


# --------------------------------------------------------------------------- statistics


def test_spearman_detects_monotone_and_not_noise():
    x = np.arange(30.0)
    res = H.spearman_test(x, x**2 + 0.5)
    assert res["statistic"] == pytest.approx(1.0) and res["p_value"] < 1e-10 and res["n"] == 30
    rng = np.random.default_rng(5)
    null = H.spearman_test(rng.normal(size=60), rng.normal(size=60))
    assert null["p_value"] > H.ALPHA
    assert np.isnan(H.spearman_test([1, np.nan, 2], [1, 2, np.nan])["p_value"])


def test_wilcoxon_exact_small_sample_zeros_and_w_plus():
    res = H.wilcoxon_test(np.arange(1, 11, dtype=float))
    assert res["p_value"] == pytest.approx(2 / 2**10)  # the paper's H9 p = 0.002
    assert res["statistic"] == 55 and res["n_positive"] == 10
    res = H.wilcoxon_test([0, 0, 0, 0, 0, 0])
    assert res["p_value"] == 1.0 and res["n_nonzero"] == 0
    assert np.isnan(H.wilcoxon_test([1.0, 2.0, 3.0])["p_value"])  # fewer than min_n
    d = np.array([0, 0, 1.0, -2.0, 3.0, 4.0, 5.0, -0.5])
    res = H.wilcoxon_test(d)
    nz = d[d != 0]
    assert res["p_value"] == pytest.approx(stats.wilcoxon(nz).pvalue)
    assert res["effect"] == pytest.approx(np.median(d)) and res["n"] == 8 and res["n_nonzero"] == 6
    assert res["statistic"] == pytest.approx(stats.rankdata(np.abs(nz))[nz > 0].sum())


# --------------------------------------------------------------------------- features


def test_rank2_r2_exact_structure_and_noise():
    rng = np.random.default_rng(0)
    M = np.outer(rng.normal(size=20), rng.normal(size=8)) + rng.normal(size=8)  # rank 1 after centring
    np.testing.assert_allclose(H.rank2_r2(M, 0), 1.0, atol=1e-10)
    np.testing.assert_allclose(H.rank2_r2(M, 1), 1.0, atol=1e-10)
    N = rng.normal(size=(40, 12))
    assert H.rank2_r2(N, 0).max() < 0.9
    N[3, 2] = np.nan
    assert np.isfinite(H.rank2_r2(N, 1)).all()


def test_correlation_matrices_match_scipy_and_thresholds():
    M = bench_data(True)
    R = H.benchmark_abs_corr(M)
    a, b = 0, 6
    m = np.isfinite(M[:, a]) & np.isfinite(M[:, b])
    assert R[a, b] == pytest.approx(abs(stats.pearsonr(M[m, a], M[m, b]).statistic))
    assert R[a, b] > 0.95 and np.isnan(R[a, a])
    X = np.full((6, 4), np.nan)
    X[:4, 0] = [1, 2, 3, 4]
    X[:4, 1] = [2, 1, 4, 3]
    assert np.isnan(H.benchmark_abs_corr(X)[0, 1])  # 4 < 5 shared models
    Rm = H.model_abs_corr(np.array([[1, 2, 3, np.nan], [2, 4, 7, 1], [1, 2, np.nan, np.nan]]))
    assert Rm[0, 1] == pytest.approx(abs(np.corrcoef([1, 2, 3], [2, 4, 7])[0, 1]))
    assert Rm[0, 2] == 0.0 and Rm[1, 1] == 0.0  # < 3 shared -> 0, diagonal 0


def test_model_hide_masks_follow_the_paper_protocol():
    M = model_data(True)
    obs = np.isfinite(M)
    obs[0, 4:] = False  # a model with 4 scores ...
    obs[1, 3:] = False  # ... and one with 3 (skipped)
    half = H._model_hide_masks(obs, 3, 0.5)
    three = H._model_hide_masks(obs, 3, 0.75)
    assert 1 not in half and len(half[0]) == 2
    rng = np.random.RandomState(3 * 2000)  # the paper's RandomState(seed * 2000)
    for i in range(obs.shape[0]):
        js = np.flatnonzero(obs[i])
        if len(js) < 4:
            continue
        rng.shuffle(js)
        np.testing.assert_array_equal(half[i], js[: len(js) // 2])
        np.testing.assert_array_equal(three[i], js[: max(1, int(len(js) * 0.75))])
        assert set(half[i]) <= set(three[i])  # nested


def test_temporal_groups_sort_date_strings_stably():
    dates = ["2025-03-01", "2024-09", "2025", "2024-01-15", None, "2025-03-01", "2026-01-01"]
    a, b, c = H.temporal_groups(dates)
    order = np.concatenate([a, b, c]).tolist()
    assert order == [3, 1, 2, 0, 5, 6] and len(a) == 2 and len(b) == 2 and len(c) == 2
    assert H._condition_offset("A_oldest") == int(hashlib.md5(b"A_oldest").hexdigest()[:8], 16) % 10000


# --------------------------------------------------------------------------- benchmark side


def test_held_out_cells_never_reach_the_predictor():
    M = bench_data(True)
    for recs in (
        H.bench_target_coverage(M, constant_spy_batch, n_seeds=2),
        H.bench_strong_neighbors(M, constant_spy_batch, n_seeds=2),
        H.bench_neighbor_support(M, constant_spy_batch, n_seeds=2),
        H.bench_same_category(M, np.arange(12) % 6, constant_spy_batch, n_seeds=2),
    ):
        assert len(recs) and (recs["base_medae"] > 900).all() and (recs["treat_medae"] > 900).all()
    Mm = model_data(True)
    recs = H.model_peer_support(Mm, constant_spy_batch, n_seeds=2)
    assert len(recs) and (recs["base_medae"] > 900).all()
    cells = H.model_peer_removal(Mm, [[] for _ in range(30)], constant_spy_batch, n_seeds=2)
    assert (cells["predicted"] == -1000).all()


def test_target_coverage_split_sizes():
    M = bench_data(True)
    recs = H.bench_target_coverage(M, additive_batch, n_seeds=3)
    n_obs = np.isfinite(M).sum(0)
    assert set(recs["drop_rate"]) == {0.75} and len(recs) == 12 * 3
    for _, r in recs.iterrows():
        n = n_obs[int(r["benchmark"])]
        n_test = max(3, n // 2)
        assert r["n_test"] == n_test and r["n_train_kept"] == max(1, int((n - n_test) * 0.25))


def test_strong_neighbor_presence_planted_and_null():
    planted = H.bench_strong_neighbors(bench_data(True), neighbor_regression_batch)
    null = H.bench_strong_neighbors(bench_data(False), neighbor_regression_batch)
    for m in H.METRICS:
        res = H.grouped_wilcoxon(planted, "benchmark", m)
        assert res["p_value"] < H.ALPHA and res["effect"] > 0 and res["n"] == 12
        res0 = H.grouped_wilcoxon(null, "benchmark", m)
        assert not res0["p_value"] < H.ALPHA
    assert (planted["n_strong"] == 1).all() and (null["n_strong"] == 0).all()


def test_neighbor_support_and_same_category_planted_and_null():
    cats = np.arange(12) % 6  # a benchmark shares its category with its twin
    for fn in (
        lambda M: H.bench_neighbor_support(M, neighbor_regression_batch),
        lambda M: H.bench_same_category(M, cats, neighbor_regression_batch, n_seeds=6),
    ):
        planted, null = fn(bench_data(True)), fn(bench_data(False))
        for m in H.METRICS:
            res = H.grouped_wilcoxon(planted, "benchmark", m)
            assert res["p_value"] < H.ALPHA and res["effect"] > 0
            assert not H.grouped_wilcoxon(null, "benchmark", m)["p_value"] < H.ALPHA
    recs = H.bench_neighbor_support(bench_data(True), additive_batch, n_seeds=1)
    assert (recs["neighbor"] == (recs["benchmark"] + 6) % 12).all()  # the twin is the strongest neighbour


def test_score_spread_correlation_planted():
    rng = np.random.default_rng(3)
    spread = np.linspace(1, 30, 12)
    M = 50 + rng.normal(size=(40, 12)) * spread
    M[_mask(rng, M.shape, 0.15, 4, 8)] = np.nan
    feat, tests = H.benchmark_correlational(M, simple_folds(M), additive_batch)
    assert tests[("H3", "medae")]["p_value"] < H.ALPHA and tests[("H3", "medae")]["statistic"] > 0.8
    assert len(feat) == 12 and {"rank2_r2", "med_score", "std_score", "medape", "medae"} <= set(feat.columns)
    np.testing.assert_allclose(feat["std_score"], [np.std(c[np.isfinite(c)], ddof=1) for c in M.T])


def test_benchmark_hypotheses_table():
    M = bench_data(True)
    table, det = H.benchmark_hypotheses(
        M, simple_folds(M), np.arange(12) % 6, predict_batch=neighbor_regression_batch, return_details=True
    )
    assert list(table["hypothesis"]) == [f"H{k}" for k in range(1, 8) for _ in range(2)]
    assert list(table["metric"][:2]) == ["medape", "medae"]
    assert set(table.loc[table["hypothesis"].isin(["H1", "H2", "H3"]), "test"]) == {"spearman"}
    assert table.loc[table["hypothesis"] == "H5", "reject"].all()
    assert {"per_benchmark", "H4_records", "H5_records", "H6_records", "H7_records"} <= set(det)


# --------------------------------------------------------------------------- model side


def _peer_rows(M, thr=0.95):
    R = H.model_abs_corr(M)
    with np.errstate(invalid="ignore"):
        return [np.flatnonzero(R[i] >= thr) for i in range(M.shape[0])]


def test_strong_peer_and_same_provider_planted_and_null():
    providers_planted = [f"p{i % 10}" if i < 20 else f"solo{i}" for i in range(30)]
    providers_null = [f"solo{i}" for i in range(30)]
    kw = dict(predict_batch=peer_copy_batch, hypotheses=("H5", "H7"), peer_baseline="target_only")
    planted = H.model_hypotheses(model_data(True), providers_planted, [False] * 30, ["2025"] * 30, **kw)
    null = H.model_hypotheses(model_data(False), providers_null, [False] * 30, ["2025"] * 30, **kw)
    assert planted["reject"].all() and (planted["effect"] >= 0).all()
    assert not null["reject"].any()
    assert (null["p_value"] == 1.0).all()  # nothing to remove: deltas all zero
    assert sum(len(r) > 0 for r in _peer_rows(model_data(True))) == 20
    paper_baseline = H.model_hypotheses(
        model_data(True),
        providers_planted,
        [False] * 30,
        ["2025"] * 30,
        predict_batch=peer_copy_batch,
        hypotheses=("H5",),
    )
    assert paper_baseline["n"].eq(30).all()  # every model paired with the global hide-half


def test_strong_peer_support_planted():
    recs = H.model_peer_support(model_data(True), peer_copy_batch)
    assert set(recs["model"]) == set(range(20))  # only cloned models have a |r| >= 0.95 peer
    assert ((recs["peer"] - recs["model"]) % 10 == 0).all()
    for m in H.METRICS:
        res = H.grouped_wilcoxon(recs, "model", m)
        assert res["p_value"] < H.ALPHA and res["effect"] > 0
    assert H.model_peer_support(model_data(False), peer_copy_batch).empty


def test_observation_count_planted_and_cells_option():
    M = model_data(True, n_bench=30)  # at 75% hidden a clone pair shares < 3 scores: no peer to copy
    table = H.model_hypotheses(
        M, ["x"] * 30, [False] * 30, ["2025"] * 30, predict_batch=peer_copy_batch, hypotheses=("H8",)
    )
    assert table["reject"].all() and (table["effect"] > 0).all()
    base, own = H.model_observation_count(M, additive_batch, n_seeds=2)
    _, common = H.model_observation_count(M, additive_batch, n_seeds=2, cells="common", baseline_cells=base)
    assert len(own) > len(base) and len(common) == len(base)
    key = ["seed", "model", "benchmark"]
    pd.testing.assert_frame_equal(
        common[key].sort_values(key).reset_index(drop=True), base[key].sort_values(key).reset_index(drop=True)
    )


def test_model_correlational_features_and_skipped_size():
    rng = np.random.default_rng(4)
    ability = rng.normal(size=30)
    reasoning = ability > 0
    noise = np.where(reasoning, 1.0, 12.0)  # reasoning models are easier to predict
    M = 50 + 10 * ability[:, None] + rng.normal(size=(30, 16)) * noise[:, None]
    table = H.model_hypotheses(
        M, ["x"] * 30, reasoning, ["2025"] * 30, predict_batch=additive_batch, hypotheses=("H1", "H2", "H3", "H4")
    )
    h1 = table[table["hypothesis"] == "H1"]
    assert h1["p_value"].isna().all() and h1["note"].str.startswith("skipped").all()
    h2 = table[(table["hypothesis"] == "H2") & (table["metric"] == "medae")].iloc[0]
    assert h2["reject"] and h2["effect"] < 0
    params = np.where(np.arange(30) < 12, 10 ** rng.uniform(0, 3, 30), np.nan)
    with_size = H.model_hypotheses(
        M, ["x"] * 30, reasoning, ["2025"] * 30, params, predict_batch=additive_batch, hypotheses=("H1",)
    )
    assert (with_size["n"] == 12).all() and with_size["p_value"].notna().all()


def _drift_data(drift: float, seed=7, n=30, n_bench=14):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, n)
    M = (
        50
        + rng.normal(0, 8, size=(n, 1))
        + rng.normal(0, 5, size=(1, n_bench))
        + drift * t[:, None] * rng.normal(0, 1, size=(1, n_bench))
        + rng.normal(0, 1, size=(n, n_bench))
    )
    dates = [f"2025-{1 + i // 28:02d}-{1 + i % 28:02d}" for i in range(n)]
    return M, dates


def test_training_anchor_recency_planted_and_null():
    M, dates = _drift_data(40.0)
    table = H.model_hypotheses(M, ["x"] * 30, [False] * 30, dates, predict_batch=additive_batch, hypotheses=("H9",))
    assert table["reject"].all() and (table["effect"] > 0).all()
    assert table["p_value"].iloc[0] == pytest.approx(2 / 2**10)  # older anchors worse in all 10 seeds
    M0, dates0 = _drift_data(0.0)
    null = H.model_hypotheses(M0, ["x"] * 30, [False] * 30, dates0, predict_batch=additive_batch, hypotheses=("H9",))
    assert not null["reject"].any()
    recs = H.temporal_anchor(M, dates, additive_batch, ks=(1, 3))
    assert set(recs["k"]) == {1, 3} and len(recs) == 2 * 2 * 10


def test_predictability_and_paper_comparison():
    M = model_data(True)
    cells = H.model_holdout_cells(M, peer_copy_batch, n_seeds=3)
    tab, summ = H.predictability(cells, "model")
    assert summ["n"] == 30 and tab["medape"].is_monotonic_increasing
    assert summ["n_below"] == int((tab["medape"] < 15).sum())
    table = pd.DataFrame(
        [
            {
                "side": "model",
                "hypothesis": "H3",
                "name": "score_level",
                "metric": "medape",
                "effect": -0.5,
                "p_value": 1e-5,
                "n": 84,
            },
            {
                "side": "benchmark",
                "hypothesis": "H1",
                "name": "low_rank_fit",
                "metric": "medae",
                "effect": 0.1,
                "p_value": 0.2,
                "n": 133,
            },
        ]
    )
    paper = pd.read_csv(REPO / "resources" / "paper" / "benchpress_paper_values.csv")
    cmp = H.compare_with_paper(table, paper)
    assert cmp["paper_p"].tolist() == [0.001, 0.036]
    assert cmp["agree"].tolist() == [True, True]


def test_default_predict_batch_is_the_library_predictor():
    rng = np.random.default_rng(2)
    M = np.clip(50 + 15 * rng.normal(size=(12, 1)) + 10 * rng.normal(size=(12, 6)), 1, 99)
    M[rng.random(M.shape) < 0.2] = np.nan
    got = H.default_predict_batch()(np.stack([M, M]))
    np.testing.assert_allclose(got[0], predict_scores(M, "logit", "bias_als", {"rank": 2, "lam": 0.1}))
    np.testing.assert_allclose(got[1], got[0])
