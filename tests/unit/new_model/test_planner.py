"""The budget planner (benchcast.new_model.planner): known answers, and the normal approximation against the
empirical MDAD of uniform sampling on the real MuSR matrix (the mirror beside the repository)."""

import numpy as np
import pytest
from helpers import REPO
from scipy.stats import norm

from benchcast.data.catalog import load_catalog
from benchcast.data.item_level import build_tables
from benchcast.new_model.planner import agreement_probability, approximate_mdad, model_pairs, required_items
from benchcast.stats.mdad import Binning, mdad
from benchcast.studies.mdad.analysis import cell_counts
from benchcast.studies.mdad.protocol import run_cell

RAW = REPO.parent / "shared" / "raw"


def test_textbook_formula_without_the_continuity_correction():
    z = norm.ppf(0.8)
    d, q = 0.1, 0.3
    k = z**2 * (q - d**2) / d**2  # 20.5...
    assert agreement_probability(d, q, k, continuity=False) == pytest.approx(0.8)
    assert required_items(d, q, continuity=False) == int(np.ceil(k))
    assert required_items(d, q) > required_items(d, q, continuity=False)  # a tie is a disagreement
    assert required_items(0.0, q) is None
    with pytest.raises(ValueError, match="impossible"):
        required_items(0.3, 0.1)  # models 30 points apart disagree on at least 30% of the items


def test_finite_pool():
    # the whole pool: no sampling variance, the better model always wins
    assert agreement_probability(0.02, 0.3, 100, pool=100) == 1.0
    assert required_items(0.05, 0.4, pool=200) < required_items(0.05, 0.4)


def test_model_pairs():
    scores = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]], float)
    pairs = model_pairs(scores)
    assert pairs[["a", "b"]].values.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert pairs.d.tolist() == [0.0, 0.5, 0.5]
    assert pairs.q.tolist() == [0.5, 0.5, 0.5]


@pytest.mark.skipif(not (RAW / "benchmark-prediction").is_dir(), reason="needs the raw mirror ../shared/raw")
def test_normal_approximation_reproduces_the_uniform_mdad_on_musr(tmp_path):
    """Issue 18, acceptance 2: within one 0.5-point bin at k = 25-250."""
    spec = load_catalog(REPO / "src" / "benchcast" / "data" / "catalog.yaml")["musr"]
    tables = build_tables(spec, RAW, log=lambda *_: None)
    models = tables["models"]
    keep = ~models.excluded.to_numpy()
    n_models, n_items = len(models), len(tables["items"])
    scores = tables["responses"].score.to_numpy().reshape(n_models, n_items)[keep].astype(float)
    subtasks = tables["items"].subtask.to_numpy()
    sizes = [25, 50, 100, 250]
    estimates, _ = run_cell(scores, subtasks, "random_sampling", {}, 300, sizes, trials=50, base_seed=0)
    pairs = model_pairs(scores)
    pool = n_items // 2  # the micro-benchmark is drawn from the seen half
    for k in sizes:
        empirical = mdad(cell_counts(estimates[estimates.k == k], "seen", Binning()))
        predicted = approximate_mdad(pairs, k, pool=pool)
        assert abs(predicted - empirical) <= 0.5, (k, empirical, predicted)
