"""The estimators' own standard errors of a difference of two models' estimates on one selection
(Method.difference_standard_error): Random-Sampling's on known answers (Cochran's finite-population
variance with Agresti and Min's pseudo-counts), AIPW's from its linearity in the answers, and none
for the other methods."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchcast.methods import REGISTRY, make_method
from benchcast.methods.base import Method
from benchcast.oracle import Oracle


def test_random_samplings_paired_error_is_cochrans_with_agresti_mins_pseudo_counts():
    rs = make_method("random_sampling").fit(np.zeros((3, 200)), 40, np.random.default_rng(0))
    d = np.zeros(40)
    d[:6], d[6:8] = 1, -1  # six items the second got right and the first wrong, two the other way
    p_plus, p_minus = 6.5 / 42, 2.5 / 42  # half an observation in each cell of the 2x2 table
    expected = math.sqrt((1 - 40 / 200) * ((p_plus + p_minus) - (p_plus - p_minus) ** 2) / 42)
    assert rs.difference_standard_error(d) == pytest.approx(expected, rel=1e-12)
    # two models that answered alike still get an interval for the items not asked; none when all were
    assert rs.difference_standard_error(np.zeros(40)) == pytest.approx(math.sqrt(0.8 * (1 / 42) / 42))
    nearly_all = make_method("random_sampling").fit(np.zeros((3, 41)), 40, np.random.default_rng(0))
    assert nearly_all.difference_standard_error(d) == pytest.approx(expected * math.sqrt((1 / 41) / 0.8))
    # partial credit: the same pseudo-items, the variance of the scores' differences
    half = np.full(40, 0.5)
    assert rs.difference_standard_error(half) == pytest.approx(
        math.sqrt(0.8 * ((40 * 0.25 + 1) / 42 - (20 / 42) ** 2) / 42)
    )


def test_a_random_sampling_fit_stored_before_it_kept_the_item_count_has_no_paired_error():
    rs = make_method("random_sampling").fit(np.zeros((3, 200)), 40, np.random.default_rng(0))
    del rs.n_items_
    assert rs.difference_standard_error(np.ones(40)) is None


def test_aipws_estimate_is_linear_in_the_answers_so_its_paired_error_is_the_differences_jackknife():
    rng = np.random.default_rng(5)
    source = (rng.random((60, 150)) < rng.random((60, 1))).astype(float)
    aipw = make_method("aipw").fit(source, 30, np.random.default_rng(1))
    a, b = (rng.random((1, 150)) < 0.4).astype(float), (rng.random((1, 150)) < 0.6).astype(float)
    est = [float(aipw.estimate(Oracle(x, 30), None)[0]) for x in (a, b)]
    # linear: the estimate of a mixture is the mixture of the estimates
    mix = float(aipw.estimate(Oracle(0.25 * a + 0.75 * b, 30), None)[0])
    assert mix == pytest.approx(0.25 * est[0] + 0.75 * est[1], abs=1e-12)
    d = (b - a)[0, aipw.coreset_]
    assert aipw.difference_standard_error(d) == pytest.approx(float(aipw.standard_error(d[None, :])[0]), rel=1e-12)
    assert aipw.difference_standard_error(d) > 0
    assert aipw.difference_standard_error(np.zeros(30)) is None  # answered alike: no interval of its own


def test_only_random_sampling_and_aipw_have_a_paired_error_of_their_own():
    own = sorted(
        n for n, cls in REGISTRY.items() if cls.difference_standard_error is not Method.difference_standard_error
    )
    assert own == ["aipw", "random_sampling"]
