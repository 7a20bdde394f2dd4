"""BenchPress completion library: transforms, the twelve completers, fold evaluation, metrics."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from benchcast.completion import completers as C
from benchcast.completion.evaluation import (
    Fold,
    evaluate_predictor,
    load_folds,
    summarize_folds,
    train_matrix,
    validate_folds,
)
from benchcast.completion.pipeline import predict_scores
from benchcast.completion.transforms import TRANSFORMS, percentage_columns, standardize, unstandardize
from benchcast.errors import ConfigError, DataError
from benchcast.stats.metrics import completion_errors


def _low_rank(n=40, m=25, rank=2, seed=0, missing=0.3):
    g = np.random.default_rng(seed)
    full = g.normal(size=(n, rank)) @ g.normal(size=(rank, m)) + g.normal(size=m)[None, :]
    Z = full.copy()
    Z[g.random(Z.shape) < missing] = np.nan
    return full, Z


def _held_err(full, Z, pred):
    miss = np.isnan(Z)
    return np.nanmean(np.abs(pred[miss] - full[miss]))


# --------------------------------------------------------------------------- transforms


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_roundtrip_on_missing_cells(name):
    """Standardize then unstandardize the *standardized values themselves* returns the scores
    (every transform is invertible on the percentage range away from the logit/probit clip)."""
    g = np.random.default_rng(1)
    M = g.uniform(5, 95, size=(12, 4))
    M[:, 3] = g.uniform(1000, 1500, size=12)  # an Elo-like column
    st = standardize(M, name)
    # pretend every cell is missing and ask for the inverse of its own z
    st_all_missing = type(st)(**{**st.__dict__, "observed": np.zeros_like(st.observed)})
    back = unstandardize(st_all_missing, st.z)
    np.testing.assert_allclose(back, M, rtol=1e-9, atol=1e-9)


def test_known_transform_values():
    M = np.array([[50.0, 1200.0], [0.0, 1300.0], [100.0, 1400.0], [25.0, 1500.0]])
    assert percentage_columns(M).tolist() == [True, False]
    st = standardize(M, "logit")
    # logit is percent-only: the Elo column is only standardized; 0 and 100 are clipped to 0.5/99.5
    t = np.log(np.array([0.5, 0.005, 0.995, 0.25]) / (1 - np.array([0.5, 0.005, 0.995, 0.25])))
    np.testing.assert_allclose(st.z[:, 0], (t - t.mean()) / t.std())
    e = M[:, 1]
    np.testing.assert_allclose(st.z[:, 1], (e - e.mean()) / e.std())
    assert st.transformed.tolist() == [True, False]
    q = standardize(M, "quantile")
    assert q.transformed.tolist() == [True, True]
    r = np.array([3, 1, 4, 2]) / 5.0
    np.testing.assert_allclose(q.z[:, 0], (r - r.mean()) / r.std())
    lg = standardize(M, "log")
    np.testing.assert_allclose(lg.mean[1], np.log1p(e).mean())
    a = standardize(M, "arcsinh")
    np.testing.assert_allclose(a.mean[0], np.arcsinh(M[:, 0] / 50).mean())


def test_unstandardize_clips_percentages_and_keeps_observed():
    M = np.array([[10.0, 1000.0], [90.0, 2000.0], [np.nan, np.nan]])
    st = standardize(M, "identity")
    Z = st.z.copy()
    Z[2] = [50.0, 50.0]  # far outside: 10 + 50 * 40 >> 100
    out = unstandardize(st, Z)
    assert out[2, 0] == 100.0  # percentage column clipped
    assert out[2, 1] == 1500.0 + 50.0 * 500.0  # non-percentage column not clipped
    np.testing.assert_array_equal(out[:2], M[:2])
    st2 = standardize(M, "logit")
    out2 = unstandardize(st2, np.zeros_like(M))
    assert out2[2, 0] == pytest.approx(100 * expit(st2.mean[0]))


def test_standardize_rejects_bad_input():
    with pytest.raises(DataError, match="infinite"):
        standardize(np.array([[1.0, np.inf]]), "identity")
    with pytest.raises(ConfigError, match="unknown transform"):
        standardize(np.ones((2, 2)), "cube")
    with pytest.raises(DataError, match="is_percentage"):
        standardize(np.ones((2, 2)), "logit", is_percentage=np.ones(3, bool))


# --------------------------------------------------------------------------- completers


def test_means_exact_on_constant_structure():
    Z = np.tile(np.arange(5.0), (6, 1))  # constant columns
    Z[1, 2] = Z[4, 0] = np.nan
    out = C.benchmark_mean(Z)
    assert out[1, 2] == 2.0 and out[4, 0] == 0.0
    R = np.tile(np.arange(6.0)[:, None], (1, 5))  # constant rows
    R[2, 3] = np.nan
    assert C.model_mean(R)[2, 3] == 2.0
    R[3] = np.nan  # an empty row falls back to the column mean
    assert C.model_mean(R)[3, 0] == pytest.approx(np.nanmean(R[:, 0]))


def test_knn_exact_on_duplicates():
    g = np.random.default_rng(2)
    base = g.normal(size=(20, 3))
    Z = np.hstack([base, base[:, :1] * 2.0 + 1.0])  # column 3 is an affine copy of column 0
    Z[5, 3] = np.nan
    # Bench-KNN with k=1 carries the neighbour's z-score over to the target column's scale
    m0, s0 = Z[:, 0].mean(), Z[:, 0].std()
    m3, s3 = np.nanmean(Z[:, 3]), np.nanstd(Z[:, 3])
    assert C.bench_knn(Z, k=1)[5, 3] == pytest.approx(m3 + (base[5, 0] - m0) / s0 * s3)
    rows = g.normal(size=(6, 8))
    Zm = np.vstack([rows, rows[2:3]])  # model 6 duplicates model 2
    Zm[6, 4] = np.nan
    assert C.model_knn(Zm, k=1)[6, 4] == pytest.approx(rows[2, 4])


def test_regression_ensembles_exact_on_affine_columns_and_leave_gaps():
    g = np.random.default_rng(3)
    x = g.normal(size=30)
    Z = np.column_stack([x, 3 * x - 1, -2 * x + 0.5, g.normal(size=30)])
    Z[4, 1] = np.nan
    out = C.bench_reg(Z, k=2, min_r2=0.5)
    assert out[4, 1] == pytest.approx(3 * x[4] - 1)
    # a cell whose model has none of the kept predictors stays unpredicted (coverage < 100%)
    Z2 = Z.copy()
    Z2[7, [0, 1, 2]] = np.nan
    out2 = C.bench_reg(Z2, k=2, min_r2=0.5)
    assert np.isnan(out2[7, 0])
    # ModelReg is BenchReg on the transpose
    np.testing.assert_array_equal(C.model_reg(Z.T, k=2, min_r2=0.5), out.T)


def test_low_rank_methods_recover_exact_low_rank():
    full, Z = _low_rank()
    base = _held_err(full, Z, C.benchmark_mean(Z))
    assert _held_err(full, Z, C.soft_impute(Z, rank=3, max_iter=2000, tol=1e-12)) < 1e-3  # rank 2 + offsets
    assert _held_err(full, Z, C.bias_als(Z, rank=2, lam=1e-4, n_iter=200)) < 1e-2
    assert _held_err(full, Z, C.nuclear_norm(Z, lam=0.01, lr=1.0, max_iter=2000)) < 0.05 * base
    assert _held_err(full, Z, C.pmf(Z, rank=3, max_iter=5000, lr=0.02, reg=1e-4)) < 0.1 * base
    assert _held_err(full, Z, C.mlp(Z, lr=1e-2, epochs=300)) < base
    nonneg = np.abs(full)
    Zn = np.where(np.isnan(Z), np.nan, nonneg)
    assert _held_err(nonneg, Zn, C.nmf(Zn, rank=2, max_iter=3000, lr=0.01)) < _held_err(
        nonneg, Zn, C.benchmark_mean(Zn)
    )


def test_completers_keep_observed_cells():
    _, Z = _low_rank(seed=4)
    obs = ~np.isnan(Z)
    for comp in C.COMPLETERS.values():
        out = comp.fn(Z, **comp.grid[0])
        np.testing.assert_array_equal(out[obs], Z[obs], err_msg=comp.name)


def test_bias_als_vectorized_equals_loop_reference():
    _, Z = _low_rank(n=15, m=12, seed=5, missing=0.5)
    Z[3] = np.nan  # an empty row and column keep their start
    Z[:, 7] = np.nan
    for lam in (0.01, 0.1, 1.0):
        np.testing.assert_allclose(C.bias_als(Z, lam=lam), C.bias_als_reference(Z, lam=lam), atol=1e-10)
    batch = C.bias_als_batch(np.stack([Z, np.where(np.isnan(Z), 0.0, Z)]))
    np.testing.assert_allclose(batch[0], C.bias_als(Z), atol=1e-12)
    avg, members = C.bias_als(Z, return_members=True)
    assert members.shape == (10,) + Z.shape
    np.testing.assert_allclose(members.mean(axis=0)[np.isnan(Z)], avg[np.isnan(Z)])


def test_bias_als_observed_means_variant_and_bad_option():
    _, Z = _low_rank(seed=6)
    out = C.bias_als(Z, offsets="observed_means")
    assert np.isfinite(out).all()
    with pytest.raises(ConfigError, match="offsets"):
        C.bias_als(Z, offsets="zero")


def test_unknown_method_and_bad_params():
    with pytest.raises(ConfigError, match="unknown completion method"):
        C.complete("svd++", np.ones((3, 3)))
    with pytest.raises(ConfigError, match="bad hyper-parameters"):
        C.complete("bench_knn", np.ones((3, 3)), neighbours=3)


def test_grid_matches_paper_section_4_2():
    sizes = {name: len(c.grid) for name, c in C.COMPLETERS.items()}
    assert sizes == {
        "benchmark_mean": 1,
        "model_mean": 1,
        "bench_knn": 4,
        "model_knn": 4,
        "bench_reg": 9,
        "model_reg": 9,
        "soft_impute": 1,
        "bias_als": 3,
        "nmf": 4,
        "pmf": 4,
        "nuclear_norm": 4,
        "mlp": 3,
    }


# --------------------------------------------------------------------------- evaluation


def _folds_for(obs, n_folds=3, seed=0):
    g = np.random.default_rng(seed)
    cells = np.argwhere(obs)
    assign = g.integers(0, n_folds, len(cells))
    return [Fold(seed=0, fold=k, cells=cells[assign == k]) for k in range(n_folds)]


def test_fold_masking_never_leaks_a_held_out_cell():
    full, Z = _low_rank(seed=7, missing=0.2)
    M = 50 + 10 * np.tanh(Z)
    folds = _folds_for(~np.isnan(M))
    seen = []

    def spy(train):
        seen.append(train.copy())
        return predict_scores(train, "logit", "bias_als", {"rank": 2, "lam": 0.1})

    cells = evaluate_predictor(M, folds, spy)
    for f, train in zip(folds, seen):
        assert np.isnan(train[f.cells[:, 0], f.cells[:, 1]]).all()
    # changing the held-out values cannot change their predictions
    M2 = M.copy()
    M2[folds[0].cells[:, 0], folds[0].cells[:, 1]] = 0.0
    cells2 = evaluate_predictor(
        M2, folds[:1], lambda t: predict_scores(t, "logit", "bias_als", {"rank": 2, "lam": 0.1})
    )
    n0 = len(folds[0].cells)
    np.testing.assert_array_equal(cells2["predicted"].to_numpy(), cells["predicted"].to_numpy()[:n0])


def test_summarize_folds_median_and_coverage():
    cells = pd.DataFrame(
        {
            "seed": [0] * 6,
            "fold": [0, 0, 0, 1, 1, 1],
            "actual": [10.0, 20.0, 0.0, 50.0, 50.0, 50.0],
            "predicted": [11.0, 22.0, 1.0, 55.0, np.nan, 40.0],
        }
    )
    per_fold, summary = summarize_folds(cells)
    f0 = per_fold.iloc[0]
    assert f0.medape == pytest.approx(10.0)  # |actual| = 0 is left out of APE
    assert f0.medae == pytest.approx(1.0)
    assert per_fold.iloc[1].medae == pytest.approx(7.5)
    s = summary.iloc[0]
    assert s.coverage == pytest.approx(5 / 6)
    assert s.medae == pytest.approx((1.0 + 7.5) / 2)


def test_completion_errors_counts():
    r = completion_errors(np.array([1.0, 2.0, np.nan]), np.array([2.0, np.nan, 3.0]))
    assert r == {"medape": 100.0, "medae": 1.0, "n": 1, "n_total": 3}


def test_load_and_validate_folds(tmp_path):
    obs = np.ones((3, 4), bool)
    obs[0, 0] = False
    p = tmp_path / "folds.json"
    p.write_text(
        json.dumps({"n_models": 3, "n_bench": 4, "folds": [{"seed": 42, "fold": 0, "test_cells": [[1, 2], [2, 3]]}]})
    )
    folds = load_folds(p, (3, 4))
    assert folds[0].cells.tolist() == [[1, 2], [2, 3]]
    validate_folds(folds, obs, p)
    with pytest.raises(DataError, match="folds are for"):
        load_folds(p, (4, 4))
    p.write_text(json.dumps({"n_models": 3, "n_bench": 4, "folds": [{"seed": 42, "fold": 0, "test_cells": [[1, 9]]}]}))
    with pytest.raises(DataError, match="outside the matrix"):
        load_folds(p, (3, 4))
    with pytest.raises(DataError, match="no observed score"):
        validate_folds([Fold(0, 0, np.array([[0, 0]]))], obs, p)
    with pytest.raises(DataError, match="does not exist"):
        load_folds(tmp_path / "missing.json")
    np.testing.assert_array_equal(np.isnan(train_matrix(np.ones((3, 4)), np.array([[1, 2]]))).sum(), 1)
