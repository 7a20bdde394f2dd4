"""Tests for the BenchPress rank-2 geometry study (Section 3.3, Figure 4, Tables 1-2).

Synthetic matrices are built here; the checks on the real 84 x 133 matrix skip when the raw
mirror (``../shared/raw`` next to the repository, the default ``raw_dir`` of
config/config.yaml) is absent.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import REPO

from benchcast.completion.evaluation import Fold
from benchcast.studies.benchpress.geometry import (
    PAPER_THRESHOLD_GRID,
    complete_submatrices,
    explained_variance_ratio,
    largest_complete_submatrix,
    rank_sweep,
    soft_impute_predictor,
    submatrix_svd_table,
    svd_spectrum,
    threshold_filter,
    threshold_sweep,
)

RAW = REPO.parent / "shared" / "raw"  # config/config.yaml: raw_dir ../shared/raw
DATA_JSON = RAW / "benchpress" / "website" / "data.json"

# Table 1 of the paper, rows reproducible from the (15, 8)-filtered matrix:
# (min per model, min per bench) -> (#models, #benchmarks, #observed)
PAPER_TABLE1_STRICT = {
    (15, 8): (84, 133, 2604),
    (15, 12): (61, 81, 1811),
    (15, 16): (53, 53, 1337),
    (20, 8): (49, 110, 1885),
    (20, 12): (41, 69, 1353),
}


def per_model_folds(observed: np.ndarray, n_folds: int = 3, seed: int = 0) -> list[Fold]:
    """Split each model's observed cells into ``n_folds`` disjoint held-out sets (the paper's scheme)."""
    rng = np.random.default_rng(seed)
    parts: list[list[tuple[int, int]]] = [[] for _ in range(n_folds)]
    for i in range(observed.shape[0]):
        js = np.flatnonzero(observed[i])
        rng.shuffle(js)
        for k, chunk in enumerate(np.array_split(js, n_folds)):
            parts[k] += [(i, int(j)) for j in chunk]
    return [Fold(seed=seed, fold=k, cells=np.asarray(p, dtype=np.int64).reshape(-1, 2)) for k, p in enumerate(parts)]


def rank2_matrix(n: int = 60, m: int = 20, seed: int = 0) -> np.ndarray:
    """Exact rank 2: a per-benchmark level plus one model factor (level + u b^T).

    The level term keeps the matrix rank 2 after column centering / z-scoring, which the
    completion pipeline applies before Soft-Impute.
    """
    rng = np.random.default_rng(seed)
    level = rng.uniform(40, 60, size=m)
    loading = rng.uniform(5, 15, size=m)
    M = level[None, :] + np.outer(rng.normal(size=n), loading)
    assert np.linalg.matrix_rank(M) == 2
    return M


@pytest.fixture(scope="module")
def real_matrix():
    if not DATA_JSON.exists():
        pytest.skip(f"raw mirror not found at {RAW}")
    from benchcast.data.aggregate import read_benchpress

    return read_benchpress(DATA_JSON).to_matrix().to_numpy()


# --------------------------------------------------------------------------- rank sweep


def test_rank_sweep_bottoms_out_at_rank_2_on_exact_rank_2_matrix():
    rng = np.random.default_rng(1)
    M = rank2_matrix(seed=1)
    M[rng.random(M.shape) < 0.3] = np.nan
    folds = per_model_folds(~np.isnan(M))
    # converged Soft-Impute (the paper's 100 iterations / 1e-4 stop early on this toy)
    df = rank_sweep(M, folds, ranks=[1, 2, 3, 4], transforms=("identity",), max_iter=2000, tol=1e-12)
    assert list(df.columns[:5]) == ["transform", "rank", "medape", "medae", "coverage"]
    assert df["rank"].tolist() == [1, 2, 3, 4] and (df["transform"] == "identity").all()
    err = df.set_index("rank")["medape"]
    assert err[2] < 1e-6  # exact recovery of the held-out cells
    assert err[1] > 0.5  # one factor is not enough
    assert (err >= err[2] - 1e-9).all()  # nothing beats rank 2
    assert int(err.idxmin()) == 2
    assert (df["coverage"] == 1.0).all()
    assert (df["n_cells"] == int((~np.isnan(M)).sum())).all()
    assert (df["n_folds"] == 3).all()


def test_rank_sweep_runs_both_spaces_and_rejects_unobserved_held_out_cells():
    M = np.clip(rank2_matrix(n=20, m=8, seed=2), 1, 99)
    M[np.random.default_rng(2).random(M.shape) < 0.2] = np.nan
    folds = per_model_folds(~np.isnan(M))
    df = rank_sweep(M, folds, ranks=[1, 2])
    assert list(zip(df["transform"], df["rank"])) == [("identity", 1), ("identity", 2), ("logit", 1), ("logit", 2)]
    assert np.isfinite(df[["medape", "medae", "medape_fold_median", "medae_fold_median"]].to_numpy()).all()
    bad = Fold(seed=0, fold=0, cells=np.argwhere(np.isnan(M))[:1])
    with pytest.raises(Exception, match="no observed score"):
        rank_sweep(M, [bad], ranks=[1])


def test_raw_space_predictor_does_not_clip_unless_asked():
    # every column is affine in x; the hidden cell of column 3 (= x + 10) extrapolates above 100
    x = np.array([5, 20, 35, 50, 65, 80, 90, 99.0])
    M = np.column_stack([x, 0.5 * x + 20, 0.8 * x + 5, x + 10, 0.9 * x])
    M[7, 3] = np.nan
    raw = soft_impute_predictor(1, "identity", max_iter=2000, tol=1e-14)(M)
    clipped = soft_impute_predictor(1, "identity", clip_identity=True, max_iter=2000, tol=1e-14)(M)
    assert raw[7, 3] > 100.0  # the paper's raw-space Soft-Impute does not clip
    assert clipped[7, 3] == 100.0
    observed = ~np.isnan(M)
    np.testing.assert_array_equal(raw[observed], M[observed])


# --------------------------------------------------------------------------- SVD spectrum / submatrices


def test_stable_rank_of_rank_1_matrix_is_1():
    rng = np.random.default_rng(3)
    # rank 1 after column centering: every column is a multiple of one centered vector
    u = rng.normal(size=12)
    sub = np.outer(u, rng.uniform(1, 5, size=6)) + rng.uniform(0, 50, size=6)
    spec = svd_spectrum(sub)
    assert spec["stable_rank"] == pytest.approx(1.0, abs=1e-10)
    assert spec["var_top1"] == pytest.approx(1.0, abs=1e-10)
    assert (spec["n_models"], spec["n_benchmarks"]) == (12, 6)
    # uncentered, a plain rank-1 matrix also has stable rank 1
    assert svd_spectrum(np.outer(u, [1.0, 2.0, 3.0]), center=False)["stable_rank"] == pytest.approx(1.0)


def test_variance_explained_sums_to_1_and_is_cumulative():
    rng = np.random.default_rng(4)
    sub = rng.normal(size=(9, 5)) * [1, 2, 3, 4, 5]
    ratio = explained_variance_ratio(sub)
    assert ratio.sum() == pytest.approx(1.0)
    assert np.all(np.diff(ratio) <= 1e-15) and np.all(ratio >= 0)
    spec = svd_spectrum(sub)
    assert spec["var_top1"] == pytest.approx(ratio[0])
    assert spec["var_top2"] == pytest.approx(ratio[:2].sum())
    assert spec["var_top3"] == pytest.approx(ratio[:3].sum())
    assert spec["var_top1"] <= spec["var_top2"] <= spec["var_top3"] <= 1.0 + 1e-12
    assert spec["stable_rank"] == pytest.approx(1.0 / ratio[0])
    # fewer components than k: all of the variance
    assert svd_spectrum(sub[:, :2])["var_top3"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="fully observed"):
        svd_spectrum(np.where(np.eye(3) > 0, np.nan, 1.0))
    with pytest.raises(ValueError, match="no variance"):
        svd_spectrum(np.ones((4, 3)))


def test_complete_submatrices_are_fully_observed_and_maximal():
    rng = np.random.default_rng(5)
    M = rng.uniform(0, 100, size=(30, 12))
    M[rng.random(M.shape) < 0.35] = np.nan
    M[:, 0] = rng.uniform(0, 100, size=30)  # one complete column
    obs = ~np.isnan(M)
    coverage = obs.sum(axis=0)
    subs = complete_submatrices(M, benchmark_counts=(1, 2, 3, 4), min_models=1)
    assert [s.shape[1] for s in subs] == [1, 2, 3, 4]
    for s in subs:
        assert np.isfinite(s.take(M)).all()  # fully observed
        k = len(s.cols)
        assert sorted(coverage[s.cols], reverse=True) == sorted(coverage, reverse=True)[:k]  # best-covered
        others = np.setdiff1d(np.arange(M.shape[0]), s.rows)
        assert not obs[np.ix_(others, s.cols)].all(axis=1).any()  # no complete model left out
    assert subs[0].shape == (30, 1) and subs[0].cols[0] == 0
    # nested: more benchmarks, fewer (or equal) models
    assert all(set(b.rows) <= set(a.rows) for a, b in zip(subs, subs[1:]))
    big = largest_complete_submatrix(M, min_benchmarks=1)
    assert np.isfinite(big.take(M)).all()
    assert big.shape[0] * big.shape[1] == max(
        s.shape[0] * s.shape[1] for s in complete_submatrices(M, range(1, 13), min_models=0)
    )
    with pytest.raises(ValueError, match="models are observed"):
        complete_submatrices(M, benchmark_counts=(12,), min_models=31)
    table = submatrix_svd_table(M, benchmark_counts=(2, 3))
    assert table["n_benchmarks"].tolist() == [2, 3]
    assert table["n_models"].tolist() == [subs[1].shape[0], subs[2].shape[0]]


# --------------------------------------------------------------------------- threshold filter


def test_threshold_filter_iterates_to_a_fixed_point():
    # at (3, 3): row 3 (2 obs) goes; then columns 1 and 2 have 2 obs and go; then every row
    # has 2 obs and goes; then the columns are empty -- the removals cascade to nothing
    M = np.full((4, 4), np.nan)
    M[0, [0, 1, 2, 3]] = 1
    M[1, [0, 1, 3]] = 1
    M[2, [0, 2, 3]] = 1
    M[3, [1, 2]] = 1
    res = threshold_filter(M, 3, 3)
    assert res.rows.tolist() == [] and res.cols.tolist() == [] and res.matrix.size == 0
    assert res.passes == 5 and res.fill == 0.0
    res = threshold_filter(M, 3, 2)
    assert res.rows.tolist() == [0, 1, 2] and res.cols.tolist() == [0, 1, 2, 3]
    # the result is a fixed point: filtering it again changes nothing, in one pass
    again = threshold_filter(res.matrix, 3, 2)
    assert again.passes == 1 and again.matrix.shape == res.matrix.shape
    # zero thresholds still drop empty rows / columns (the paper's code counts observed cells)
    E = np.full((3, 3), np.nan)
    E[0, 0] = E[2, 0] = 5
    res0 = threshold_filter(E, 0, 0)
    assert res0.rows.tolist() == [0, 2] and res0.cols.tolist() == [0]
    assert res0.n_observed == 2 and res0.fill == 1.0


def test_threshold_sweep_columns_and_reproducible_flag():
    rng = np.random.default_rng(6)
    M = rng.uniform(0, 100, size=(40, 30))
    M[rng.random(M.shape) < 0.6] = np.nan
    df = threshold_sweep(M, grid=[(5, 5), (10, 10), (100, 100)], base_thresholds=(5, 5))
    assert list(df.columns) == [
        "min_per_model",
        "min_per_bench",
        "n_models",
        "n_benchmarks",
        "n_observed",
        "fill",
        "passes",
        "reproducible",
    ]
    assert df[["min_per_model", "min_per_bench"]].values.tolist() == [[0, 0], [5, 5], [10, 10]]  # empty dropped
    assert df["reproducible"].tolist() == [False, True, True]
    assert df["n_observed"].iloc[0] == int((~np.isnan(M)).sum())
    # filtering a filtered matrix at stricter thresholds = filtering the original
    base = threshold_filter(M, 5, 5)
    for tm, tb in [(8, 6), (10, 10)]:
        direct, via = threshold_filter(M, tm, tb), threshold_filter(base.matrix, tm, tb)
        np.testing.assert_array_equal(direct.matrix, via.matrix)


# --------------------------------------------------------------------------- real data


def test_real_matrix_is_a_fixed_point_of_the_15_8_filter(real_matrix):
    M = real_matrix
    assert M.shape == (84, 133) and int((~np.isnan(M)).sum()) == 2604
    res = threshold_filter(M, 15, 8)
    assert res.passes == 1
    assert res.rows.tolist() == list(range(84)) and res.cols.tolist() == list(range(133))
    np.testing.assert_array_equal(res.matrix, M)  # returns itself (NaNs in the same places)
    # one more observation on either axis is no longer a fixed point
    assert threshold_filter(M, 16, 8).matrix.shape != M.shape
    assert threshold_filter(M, 15, 9).matrix.shape != M.shape


def test_real_matrix_reproduces_strict_table_1_rows(real_matrix):
    df = threshold_sweep(real_matrix, PAPER_THRESHOLD_GRID, base_thresholds=(15, 8)).set_index(
        ["min_per_model", "min_per_bench"]
    )
    for key, expected in PAPER_TABLE1_STRICT.items():
        row = df.loc[key]
        assert row["reproducible"]
        assert (row["n_models"], row["n_benchmarks"], row["n_observed"]) == expected
    assert not df.loc[(10, 8), "reproducible"]


def test_real_matrix_table_2(real_matrix):
    table = submatrix_svd_table(real_matrix)
    assert list(zip(table["n_benchmarks"], table["n_models"])) == [(4, 42), (7, 11), (10, 7), (13, 6)]
    # the values in the paper code's submatrix_sweep.json
    np.testing.assert_allclose(
        table["stable_rank"], [1.1065138941389359, 1.2787331637802668, 1.1557016343346962, 1.116484090533418], rtol=1e-9
    )
    np.testing.assert_allclose(
        table["var_top2"], [0.9763173595543265, 0.9116497234991514, 0.9498425899105102, 0.9594834260511425], rtol=1e-9
    )
    assert (table["var_top2"] > 0.9).all()
