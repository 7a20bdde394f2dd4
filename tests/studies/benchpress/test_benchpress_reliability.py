"""BenchPress reliability estimators (Section 6.2, Appendix E.2): features, cross-fitted risk,
risk-coverage, conformal intervals, trust calibration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchcast.completion import reliability as R
from benchcast.completion.evaluation import Fold, evaluate_predictor, train_matrix
from benchcast.studies.benchpress import settings

# --------------------------------------------------------------------------- helpers


def _loop_best_corr(A, min_overlap=3):
    """Reference: the paper's pair loop (|Pearson| over shared entries, strict >)."""
    n = A.shape[0]
    best, overlap = np.zeros(n), np.zeros(n)
    for a in range(n):
        for b in range(a + 1, n):
            m = np.isfinite(A[a]) & np.isfinite(A[b])
            if m.sum() < min_overlap or np.std(A[a][m]) <= 1e-12 or np.std(A[b][m]) <= 1e-12:
                continue
            c = abs(np.corrcoef(A[a][m], A[b][m])[0, 1])
            if c > best[a]:
                best[a], overlap[a] = c, m.sum()
            if c > best[b]:
                best[b], overlap[b] = c, m.sum()
    return best, overlap


def _synthetic_table(n_folds=6, per_fold=250, seed=0):
    """A feature table whose log-error depends on two of the hybrid features."""
    g = np.random.default_rng(seed)
    n = n_folds * per_fold
    df = pd.DataFrame({"fold_id": np.repeat(np.arange(n_folds), per_fold)})
    for name in R.FEATURE_SETS["hybrid"]:
        df[name] = g.gamma(2.0, 1.0, n)
    scale = 0.5 + df["hp_std"] + 0.5 * df["row_obs_count"]
    df["abs_err"] = scale * np.abs(g.normal(size=n))
    return df


# --------------------------------------------------------------------------- features


def test_best_abs_correlation_known_values():
    nan = np.nan
    A = np.array(
        [
            [1.0, 2.0, 3.0, 4.0, nan],  # row 0
            [2.0, 4.0, 6.0, 8.5, 1.0],  # row 1: almost 2x row 0
            [4.0, 3.0, 2.0, 1.0, 0.0],  # row 2: exactly -1 x row 0 on their overlap
            [5.0, 5.0, 5.0, nan, 7.0],  # row 3: constant on its 3-entry overlap with row 0
            [nan, nan, 1.0, 2.0, nan],  # row 4: only 2 entries -> never a valid pair
        ]
    )
    best, overlap = R.best_abs_correlation(A)
    ref_best, ref_overlap = _loop_best_corr(A)
    np.testing.assert_allclose(best, ref_best, atol=1e-12)
    np.testing.assert_array_equal(overlap, ref_overlap)
    assert best[0] == pytest.approx(1.0) and overlap[0] == 4  # row 2, exact |r| = 1
    assert best[4] == 0.0 and overlap[4] == 0.0
    # row 3 is constant on the overlap with rows 0 (3 shared) -> skipped; with rows 1 and 2 it is not
    r31 = abs(np.corrcoef([5, 5, 5, 7], [2, 4, 6, 1])[0, 1])
    r32 = abs(np.corrcoef([5, 5, 5, 7], [4, 3, 2, 0])[0, 1])
    assert best[3] == pytest.approx(max(r31, r32))


def test_best_abs_correlation_matches_loop_on_random_sparse_matrix():
    g = np.random.default_rng(3)
    A = g.normal(size=(30, 12)) @ np.diag(g.uniform(0.1, 100, 12)) + g.uniform(-500, 500, 12)
    A[g.random(A.shape) < 0.55] = np.nan
    for arr in (A, A.T):
        best, overlap = R.best_abs_correlation(arr)
        ref_best, ref_overlap = _loop_best_corr(arr)
        np.testing.assert_allclose(best, ref_best, atol=1e-9)
        # ties (|r| equal to round-off) are the only way the overlap could differ
        tie = np.abs(best - ref_best) > 0
        np.testing.assert_array_equal(overlap[~tie], ref_overlap[~tie])


def test_support_features_tiny_matrix():
    nan = np.nan
    M = np.array([[10.0, 20.0, 30.0, nan], [12.0, 22.0, 35.0, 50.0], [30.0, 20.0, 10.0, 40.0]])
    f = R.support_features(M, np.array([0, 2]), np.array([3, 0]))
    assert list(f.columns) == list(R.SUPPORT_FEATURES)
    np.testing.assert_array_equal(f["row_obs_count"], [3, 4])
    np.testing.assert_array_equal(f["col_obs_count"], [2, 3])
    np.testing.assert_allclose(f["row_median_score"], [20.0, 25.0])
    np.testing.assert_allclose(f["col_median_score"], [45.0, 12.0])
    np.testing.assert_allclose(f["col_score_dispersion"], [np.std([50, 40]), np.std([10, 12, 30])])
    # model 0's peers: model 1 (r(10,20,30 ; 12,22,35)), model 2 (exactly -1) -> 1, overlap 3
    assert f["row_best_peer_abs_corr"][0] == pytest.approx(1.0)
    assert f["row_best_peer_overlap"][0] == 3
    # benchmark 3 has 2 observations -> no benchmark pair reaches 3 shared models
    assert f["col_best_neighbor_abs_corr"][0] == 0.0
    # benchmark 0 vs benchmark 2 over 3 models: r = corr([10,12,30],[30,35,10])
    r02 = abs(np.corrcoef([10, 12, 30], [30, 35, 10])[0, 1])
    r01 = abs(np.corrcoef([10, 12, 30], [20, 22, 20])[0, 1])
    assert f["col_best_neighbor_abs_corr"][1] == pytest.approx(max(r01, r02))


def test_ensemble_features_hand_example():
    target = np.array([2.0, 0.0])
    lam = np.array([[1.0, 0.0], [2.0, 0.0], [4.0, 0.0]])
    strong = np.array([[0.0, 1.0], [10.0, np.nan], [20.0, 3.0]])
    f = R.ensemble_features(target, lam, strong)
    assert list(f.columns) == list(R.ENSEMBLE_FEATURES)
    assert f["hp_std"][0] == pytest.approx(np.std([1, 2, 4]))
    assert f["hp_mad"][0] == pytest.approx(1.4826 * 1.0)  # |[-1, 0, 2]| -> median 1
    assert f["hp_p90_p10_span"][0] == pytest.approx(3.6 - 1.2)
    assert f["hp_delta_to_median"][0] == 0.0
    assert f["strong_delta_to_median"][0] == pytest.approx(8.0)
    # NaN members are ignored: strong stack of cell 1 is [1, 3]
    assert f["strong_std"][1] == pytest.approx(1.0)
    assert f["strong_delta_to_median"][1] == pytest.approx(2.0)
    assert f["hp_std"][1] == 0.0


def test_fold_features_aligns_predictions_and_hides_the_fold():
    g = np.random.default_rng(1)
    M = g.uniform(10, 90, size=(8, 6))
    M[0, 5] = np.nan
    obs = np.argwhere(np.isfinite(M))
    g.shuffle(obs)
    folds = [Fold(seed=42, fold=0, cells=obs[:10]), Fold(seed=42, fold=1, cells=obs[10:20])]
    configs = [settings.SELECTED_CONFIG, *settings.LAMBDA_STACK[:1], *settings.STRONG_STACK[:2]]
    preds = {}
    for k, c in enumerate(configs):
        df = evaluate_predictor(M, folds, lambda tr, k=k: np.nan_to_num(tr, nan=50.0 + k))
        preds[c.key] = df.sample(frac=1.0, random_state=k)  # any row order
    t = R.fold_features(M, folds, preds, selected=configs[0], lambda_stack=configs[:2], strong_stack=configs[2:])
    assert len(t) == 20
    np.testing.assert_array_equal(t["fold_id"], np.repeat([0, 1], 10))
    np.testing.assert_array_equal(t[["model", "benchmark"]].to_numpy(), np.vstack([f.cells for f in folds]))
    np.testing.assert_allclose(t["predicted"], 50.0)
    np.testing.assert_allclose(t["abs_err"], np.abs(50.0 - M[t["model"], t["benchmark"]]))
    np.testing.assert_allclose(t["strong_std"], 0.5)  # [52, 53]
    # support features come from the training matrix (the fold's own cells hidden)
    for k, f in enumerate(folds):
        tr = train_matrix(M, f.cells)
        rows = t["fold_id"] == k
        np.testing.assert_array_equal(t.loc[rows, "col_obs_count"], np.isfinite(tr).sum(axis=0)[f.cells[:, 1]])
    with pytest.raises(KeyError):
        R.fold_features(
            M,
            folds,
            {k: v for k, v in preds.items() if k != settings.SELECTED_CONFIG.key},
            selected=settings.SELECTED_CONFIG,
            lambda_stack=configs[:2],
            strong_stack=configs[2:],
        )


# --------------------------------------------------------------------------- risk model


def test_risk_model_never_trained_on_the_evaluated_fold_spy():
    df = _synthetic_table()
    calls = []

    class Const:
        name = "const"
        validation_medae = {}

        def __init__(self, n):
            self.n = n

        def risk(self, X):
            return np.full(len(X), float(self.n))

    def spy(X, y, fold_ids, seed, *, final_seed, grid):
        calls.append((final_seed, set(np.unique(fold_ids).tolist())))
        return Const(len(X))

    est = R.leave_fold_out_risk(df, "hybrid", seed=7, grid=((),), fitter=spy)
    all_folds = set(range(6))
    assert len(calls) == 6
    for final_seed, seen in calls:
        f = final_seed - 7 - 1000
        assert f not in seen and seen == all_folds - {f}
    assert np.isfinite(est.risk).all()


def test_risk_of_a_fold_does_not_depend_on_its_own_errors():
    df = _synthetic_table()
    grid = ((), (8,))
    base = R.leave_fold_out_risk(df, "hybrid", seed=42, grid=grid)
    changed = df.copy()
    own = changed["fold_id"] == 2
    changed.loc[own, "abs_err"] = changed.loc[own, "abs_err"][::-1].to_numpy() * 50.0 + 7.0
    other = R.leave_fold_out_risk(changed, "hybrid", seed=42, grid=grid)
    np.testing.assert_array_equal(other.risk[own], base.risk[own])
    assert not np.allclose(other.risk[~own], base.risk[~own])
    assert set(base.architecture) == set(range(6)) and set(base.architecture.values()) <= {"ridge", "mlp_8"}


def test_fit_risk_model_inner_selection_and_ranking():
    df = _synthetic_table(n_folds=10, per_fold=150, seed=4)
    X = df[list(R.FEATURE_SETS["hybrid"])].to_numpy()
    y = R.risk_target(df["abs_err"].to_numpy())
    model = R.fit_risk_model(X, y, df["fold_id"].to_numpy(), 42, grid=((), (8,)))
    assert set(model.validation_medae) == {"ridge", "mlp_8"}
    assert model.name == min(model.validation_medae, key=model.validation_medae.get)
    risk = model.risk(X)
    assert (risk >= 0).all()
    truth = 0.5 + df["hp_std"] + 0.5 * df["row_obs_count"]
    assert np.corrcoef(np.argsort(np.argsort(risk)), np.argsort(np.argsort(truth)))[0, 1] > 0.8
    tr, va = R.inner_split(df["fold_id"].to_numpy(), X.shape[1])
    np.testing.assert_array_equal(va, df["fold_id"].to_numpy() % 5 == 0)
    # too few mod-5 validation cells -> mod 3; still too few -> None
    tr3, va3 = R.inner_split(np.array([1] * 100 + [3] * 60), 4)
    assert va3.sum() == 60
    assert R.inner_split(np.array([1] * 100), 4) is None


def test_unknown_kind_rejected():
    with pytest.raises(ValueError, match="unknown reliability estimator"):
        R.leave_fold_out_risk(_synthetic_table(), "oracle", seed=42, grid=((),))


# --------------------------------------------------------------------------- evaluation and calibration


def test_risk_coverage_hand_example():
    err = np.array([1, 2, 3, 4, 5, 10, 20, 30, 40, 50], dtype=float)
    risk = np.linspace(0.1, 1.0, 10)
    perm = np.random.default_rng(0).permutation(10)
    rc = R.risk_coverage(err[perm], risk[perm])
    np.testing.assert_array_equal(rc["n"], [10, 8, 6, 4, 2])
    np.testing.assert_allclose(rc["medae"], [7.5, 4.5, 3.5, 2.5, 1.5])
    rc2 = R.risk_coverage(np.append(err, 99.0), np.append(risk, np.nan), keep=(0.25,), actual=np.full(11, 10.0))
    assert rc2["n"][0] == 3 and rc2["medae"][0] == 2.0 and rc2["medape"][0] == pytest.approx(20.0)


def test_conformal_intervals_reach_nominal_coverage_on_exchangeable_data():
    g = np.random.default_rng(7)
    n_folds, per_fold = 30, 120
    fold_ids = np.repeat(np.arange(n_folds), per_fold)
    risk = np.exp(g.normal(size=len(fold_ids)))
    err = np.abs(risk * g.standard_t(5, size=len(fold_ids)))
    res = R.conformal_intervals(err, risk, fold_ids, level=0.9)
    assert 0.87 <= res.coverage <= 0.93
    assert res.n == len(err)
    # the scale of a fold is the 90% quantile of the ratio on the *other* folds
    other = fold_ids != 4
    assert res.scale[fold_ids == 4][0] == pytest.approx(np.quantile(err[other] / risk[other], 0.9))
    np.testing.assert_allclose(res.half_width, res.scale * risk)
    assert res.median_width == pytest.approx(np.median(2 * res.half_width))
    # a larger level gives wider intervals and higher coverage
    assert R.conformal_intervals(err, risk, fold_ids, level=0.95).coverage > res.coverage


def test_trust_calibration_is_monotone_non_increasing():
    g = np.random.default_rng(11)
    risk = np.exp(g.normal(size=4000))
    err = risk * 6 * np.abs(g.normal(size=4000))
    tc = R.trust_calibration(err, risk, threshold=10.0, bins=20)
    assert len(tc.bin_calibrated) == 20 and tc.bin_weight.sum() == 4000
    assert np.all(np.diff(tc.bin_risk_median) >= 0)
    assert np.all(np.diff(tc.bin_calibrated) <= 1e-12)
    grid = np.linspace(0, risk.max() * 1.5, 500)
    p = tc.predict(grid)
    assert np.all(np.diff(p) <= 1e-12) and p.min() >= 0 and p.max() <= 1
    assert p[0] == tc.bin_calibrated[0] and p[-1] == tc.bin_calibrated[-1]
    assert np.isnan(tc.predict(np.array([np.nan]))[0])


def test_trust_calibration_pools_violators():
    # three equal bins with empirical trust [0.5, 1.0, 0.0] -> PAVA gives [0.75, 0.75, 0.0]
    risk = np.arange(6, dtype=float)
    err = np.array([0, 20, 0, 0, 20, 20], dtype=float)
    tc = R.trust_calibration(err, risk, threshold=10.0, bins=3)
    np.testing.assert_allclose(tc.bin_empirical, [0.5, 1.0, 0.0])
    np.testing.assert_allclose(tc.bin_calibrated, [0.75, 0.75, 0.0])
    np.testing.assert_allclose(tc.bin_risk_median, [0.5, 2.5, 4.5])
    assert tc.predict(np.array([3.5]))[0] == pytest.approx(0.375)
