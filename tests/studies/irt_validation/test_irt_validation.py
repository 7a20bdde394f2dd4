"""Tests for the pure pieces of the IRT validation study (no py-irt needed)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ortho_group

from benchcast.studies.irt_validation.analysis import (
    COMPARISON_COLUMNS,
    FIT_COLUMNS,
    OURS,
    PYIRT,
    compare_item_parameters,
    comparison_table,
    heldout_accuracy,
    heldout_log_likelihood,
    load_pyirt_npz,
    logits,
    make_mask,
    render_markdown,
    validation_table,
)


def random_params(n_subjects=40, n_items=60, dims=3, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "ability": rng.normal(size=(n_subjects, dims)),
        "disc": rng.normal(size=(n_items, dims)),
        "diff": rng.normal(scale=0.3, size=n_items),
    }


# --------------------------------------------------------------------------- make_mask


def test_make_mask_fraction_and_shape():
    m = make_mask((50, 80), 0.1, np.random.default_rng(0))
    assert m.shape == (50, 80) and m.dtype == bool
    assert m.sum() == 400


def test_make_mask_deterministic_given_seed():
    a = make_mask((30, 40), 0.2, np.random.default_rng(7))
    b = make_mask((30, 40), 0.2, np.random.default_rng(7))
    c = make_mask((30, 40), 0.2, np.random.default_rng(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("shape, fraction", [((3, 4), 0.9), ((1, 25), 0.5), ((25, 1), 0.5), ((6, 6), 0.8)])
def test_make_mask_every_row_and_column_keeps_a_training_cell(shape, fraction):
    for seed in range(20):
        m = make_mask(shape, fraction, np.random.default_rng(seed))
        assert (~m).sum(axis=0).min() >= 1 and (~m).sum(axis=1).min() >= 1


def test_make_mask_respects_observed():
    rng = np.random.default_rng(1)
    observed = rng.random((20, 30)) < 0.7
    m = make_mask(observed.shape, 0.3, np.random.default_rng(2), observed=observed)
    assert not (m & ~observed).any()
    assert m.sum() == round(0.3 * observed.sum())
    assert ((observed & ~m).sum(axis=1) >= 1).all() and ((observed & ~m).sum(axis=0) >= 1).all()


def test_make_mask_rejects_bad_fraction():
    with pytest.raises(ValueError):
        make_mask((3, 3), 1.0, np.random.default_rng(0))


# --------------------------------------------------------------------------- held-out fit


def test_heldout_log_likelihood_known_answer():
    Y = np.array([[1.0, 0.0], [1.0, 0.0]])
    P = np.array([[0.8, 0.25], [0.5, 0.9]])
    held = np.array([[True, True], [False, False]])
    assert heldout_log_likelihood(Y, P, held) == pytest.approx((np.log(0.8) + np.log(0.75)) / 2)
    held2 = np.array([[False, False], [True, True]])
    assert heldout_log_likelihood(Y, P, held2) == pytest.approx((np.log(0.5) + np.log(0.1)) / 2)
    # accuracy: (0.8 -> 1 ok, 0.25 -> 0 ok), (0.5 -> 1 ok, 0.9 -> 1 wrong)
    assert heldout_accuracy(Y, P, held) == 1.0
    assert heldout_accuracy(Y, P, held2) == 0.5


def test_heldout_log_likelihood_skips_nan_and_clips():
    Y = np.array([[1.0, np.nan, 0.0]])
    P = np.array([[1.0, 0.3, 0.0]])
    held = np.ones((1, 3), bool)
    assert heldout_log_likelihood(Y, P, held) == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError):
        heldout_log_likelihood(Y, P, np.zeros((1, 3), bool))
    with pytest.raises(ValueError):
        heldout_log_likelihood(Y, P[:, :2], held)


def test_logits_convention():
    p = random_params(dims=4)
    expected = p["ability"] @ p["disc"].T - 4 * p["diff"][None, :]
    assert np.allclose(logits(p["ability"], p["disc"], p["diff"]), expected)


# --------------------------------------------------------------------------- parameters


def test_compare_identical_params_is_perfect():
    p = random_params()
    out = compare_item_parameters(p, p)
    for key in (
        "diff_pearson",
        "diff_spearman",
        "disc_norm_pearson",
        "disc_norm_spearman",
        "logit_pearson",
        "logit_spearman",
        "prob_pearson",
        "item_logit_pearson_median",
    ):
        assert out[key] == pytest.approx(1.0), key


def test_compare_is_rotation_invariant():
    ours = random_params(seed=1)
    theirs = random_params(seed=2)
    theirs = {k: v + 0.5 * ours[k] for k, v in theirs.items()}  # related but not equal
    base = compare_item_parameters(ours, theirs)
    R = ortho_group.rvs(3, random_state=3)
    rotated = {"ability": ours["ability"] @ R, "disc": ours["disc"] @ R, "diff": ours["diff"]}
    assert np.allclose(logits(**rotated), logits(**ours))
    out = compare_item_parameters(rotated, theirs)
    for key, value in base.items():
        assert out[key] == pytest.approx(value, abs=1e-10), key
    assert 0.0 < base["logit_pearson"] < 1.0


def test_compare_with_different_dims_and_npz(tmp_path):
    ours = random_params(dims=2)
    theirs = random_params(dims=5, seed=4)
    np.savez(tmp_path / "t.npz", **theirs)
    with np.load(tmp_path / "t.npz") as z:
        out = compare_item_parameters(ours, z)
    assert set(out) >= set(COMPARISON_COLUMNS[3:])
    assert all(-1.0 <= v <= 1.0 for v in out.values())


def test_compare_without_ability_gives_nan_logits():
    p = random_params()
    out = compare_item_parameters({"disc": p["disc"], "diff": p["diff"]}, p)
    assert np.isnan(out["logit_pearson"]) and out["diff_pearson"] == pytest.approx(1.0)


def test_compare_rejects_item_count_mismatch():
    with pytest.raises(ValueError):
        compare_item_parameters(random_params(n_items=10), random_params(n_items=11))


# --------------------------------------------------------------------------- tables


def _rows():
    rows = []
    for ds, (m, n) in {"musr": (448, 756), "qnli": (87, 5463)}.items():
        rows.append(
            dict(
                dataset=ds,
                n_models=m,
                n_items=n,
                fitter=PYIRT,
                fit_seconds=100.0,
                heldout_loglik=-0.45,
                heldout_accuracy=0.78,
                threads=1,
            )
        )
        rows.append(
            dict(
                dataset=ds,
                n_models=m,
                n_items=n,
                fitter=OURS,
                fit_seconds=4.0,
                heldout_loglik=-0.44,
                heldout_accuracy=0.79,
                threads=1,
            )
        )
    return rows


def test_validation_table_shape_and_columns():
    fits = validation_table(_rows())
    assert list(fits.columns) == FIT_COLUMNS + ["threads"]
    assert fits.shape == (4, len(FIT_COLUMNS) + 1)
    assert fits[["dataset", "fitter"]].values.tolist() == [
        ["musr", OURS],
        ["musr", PYIRT],
        ["qnli", OURS],
        ["qnli", PYIRT],
    ]
    with pytest.raises(ValueError):
        validation_table([{k: v for k, v in _rows()[0].items() if k != "fit_seconds"}])
    with pytest.raises(ValueError):
        validation_table(_rows() + _rows()[:1])
    assert list(validation_table([]).columns) == FIT_COLUMNS


def test_comparison_table_and_markdown():
    fits = validation_table(_rows())
    corr = {"musr": compare_item_parameters(random_params(), random_params()), "qnli": {}}
    comp = comparison_table(fits, corr)
    assert list(comp.columns) == COMPARISON_COLUMNS and len(comp) == 2
    musr = comp.set_index("dataset").loc["musr"]
    assert musr.speedup == pytest.approx(25.0)
    assert musr.loglik_difference == pytest.approx(0.01)
    assert np.isnan(comp.set_index("dataset").loc["qnli", "diff_pearson"])
    text = render_markdown(fits, comp, settings={"threads": 1})
    assert "| dataset |" in text and "speedup" in text and "py-irt" in text


def test_load_pyirt_npz_roundtrip(tmp_path):
    np.savez(tmp_path / "o.npz", disc=np.ones((3, 2)), fit_seconds=np.array(1.5), variant=np.array("pyirt"))
    z = load_pyirt_npz(tmp_path / "o.npz")
    assert z["fit_seconds"] == 1.5 and z["variant"] == "pyirt" and z["disc"].shape == (3, 2)
