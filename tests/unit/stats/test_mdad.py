"""Agreement and MDAD (benchcast.stats.mdad) on constructed pairs with known answers."""

import itertools
import math

import numpy as np
import pytest

from benchcast.stats.mdad import (
    BinCounts,
    Binning,
    Criterion,
    agreement_table,
    bin_counts,
    mdad,
    pair_bootstrap_interval,
    pair_outcomes,
    per_trial_mdad,
    trial_bootstrap_interval,
)


def counts_from(agreement_by_bin: dict[int, tuple[int, int]], n_bins: int | None = None) -> BinCounts:
    """One trial's BinCounts from {bin: (correct, pairs)}."""
    n = n_bins or 1 + max(agreement_by_bin)
    pairs, correct = np.zeros((1, n), np.int64), np.zeros((1, n), np.int64)
    for j, (c, p) in agreement_by_bin.items():
        pairs[0, j], correct[0, j] = p, c
    return BinCounts(pairs, correct)


def test_pairs_ties_and_bins():
    bins, correct = pair_outcomes(np.array([0.5, 0.5, 0.2]), np.array([10, 10, 5]), 20)
    # pairs (0,1) (0,2) (1,2): a micro-benchmark tie is wrong; |5/20| = 25 points = bin 50 at 0.5 points
    assert correct.tolist() == [False, True, True]
    assert bins.tolist() == [0, 50, 50]


def test_reference_tie_counts_first_model_better():
    _, correct = pair_outcomes(np.array([0.6, 0.4]), np.array([3, 3]), 10)
    assert correct.tolist() == [True]
    _, correct = pair_outcomes(np.array([0.4, 0.6]), np.array([3, 3]), 10)
    assert correct.tolist() == [False]
    _, correct = pair_outcomes(np.array([0.4, 0.6]), np.array([2, 3]), 10)
    assert correct.tolist() == [True]


def test_exact_bin_edge_and_the_codes_float_floor():
    # 34/224 - 6/224 = 0.125 exactly: bin 25 (12.5 points); the code's float floor puts it in 24
    counts = np.array([34, 6])
    assert pair_outcomes(np.array([1.0, 0.0]), counts, 224)[0].tolist() == [25]
    assert pair_outcomes(np.array([1.0, 0.0]), counts, 224, Binning(arithmetic="float"))[0].tolist() == [24]


def test_centred_buckets_round_half_up():
    # 1/400 = 0.25 points: left-closed bin 0, centred bucket [0.25, 0.75) labelled 0.5
    est = np.array([1.0, 0.0])
    assert pair_outcomes(est, np.array([2, 1]), 400)[0].tolist() == [0]
    assert pair_outcomes(est, np.array([2, 1]), 400, Binning(centred=True))[0].tolist() == [1]
    assert Binning(centred=True).label(np.array([1]))[0] == 0.5


@pytest.mark.parametrize("resolution,per_unit", [(0.25, 400), (0.5, 200), (1.0, 100)])
def test_resolutions(resolution, per_unit):
    assert Binning(resolution).per_unit == per_unit
    with pytest.raises(ValueError, match="divide 100"):
        Binning(0.3)


def test_matches_a_direct_transcription_of_the_codes_loop():
    """Random trials: bins and correctness equal a plain loop over itertools.combinations with
    math.copysign and a float floor, as the released code computes them."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(5, 300))
        counts = rng.integers(0, n + 1, size=12)
        est = rng.integers(0, 6, size=12) / 5.0  # many micro ties
        bins, correct = pair_outcomes(est, counts, n, Binning(arithmetic="float"))
        expect_bins, expect_ok = [], []
        for a, b in itertools.combinations(range(12), 2):
            ref, micro = counts[a] / n - counts[b] / n, est[a] - est[b]
            expect_ok.append(math.copysign(1, micro) == math.copysign(1, ref) and micro != 0)
            expect_bins.append(math.floor(abs(ref) * 200))
        assert bins.tolist() == expect_bins
        assert correct.tolist() == expect_ok
        exact_bins, exact_ok = pair_outcomes(est, counts, n)
        assert exact_ok.tolist() == expect_ok
        assert np.all(np.abs(exact_bins - bins) <= 1) and np.all(exact_bins >= bins)


def test_mdad_first_bin_reaching_threshold_not_monotone():
    counts = counts_from({0: (5, 10), 1: (9, 10), 2: (7, 10), 3: (17, 20)})
    assert mdad(counts) == 0.5  # bin 1 (0.5 points) first reaches 0.8, although bin 2 dips below
    assert mdad(counts, Criterion(threshold=0.85)) == 0.5
    assert mdad(counts, Criterion(threshold=0.9)) == 0.5
    assert mdad(counts, Criterion(threshold=0.95)) == 50.0  # none reaches it: the sentinel
    table = agreement_table(counts)
    assert table.bin.tolist() == [0.0, 0.5, 1.0, 1.5]
    assert table.agreement.tolist() == [0.5, 0.9, 0.7, 0.85]
    assert table.pairs.tolist() == [10, 10, 10, 20]


def test_empty_bins_are_skipped_and_pooling_sums_trials():
    t1 = counts_from({0: (1, 4), 3: (4, 4)})
    t2 = counts_from({0: (1, 4), 3: (1, 4)})
    pooled = BinCounts(np.vstack([t1.pairs, t2.pairs]), np.vstack([t1.correct, t2.correct]))
    assert mdad(t1) == 1.5 and mdad(t2) == 50.0
    assert mdad(pooled) == 50.0  # bin 3 pooled: 5/8
    assert per_trial_mdad(pooled).tolist() == [1.5, 50.0]
    assert agreement_table(pooled).pairs.tolist() == [8, 8]


def test_float_scan_reproduces_the_codes_skipped_bins():
    # the code looks bin 29 (14.5 points) up under 28's label: MDAD can never be 14.5
    counts = counts_from({28: (1, 10), 29: (10, 10)})
    assert mdad(counts) == 14.5
    assert mdad(counts, Criterion(binning=Binning(arithmetic="float"))) == 50.0


def test_bin_counts_from_outcomes():
    out = [pair_outcomes(np.array([0.9, 0.5, 0.1]), np.array([9, 5, 1]), 10) for _ in range(2)]
    c = bin_counts(out)
    assert c.pairs.shape == (2, 1 + 160)
    assert c.pairs.sum() == 6 and c.correct.sum() == 6
    assert c.pairs[0, 80] == 2 and c.pairs[0, 160] == 1  # |9-5|/10 = 40 points, |9-1|/10 = 80


def test_pair_bootstrap_interval_known_answers():
    rng = np.random.default_rng(0)
    # degenerate bins (all wrong, all right): every bootstrap mean is 0 or 1
    sure = counts_from({0: (0, 50), 1: (50, 50)})
    assert pair_bootstrap_interval(sure, rng) == pair_bootstrap_interval(sure, rng)
    interval = pair_bootstrap_interval(sure, rng)
    assert (interval.mdad, interval.lower, interval.upper) == (0.5, 0.5, 0.5)
    # bin 1 at exactly 0.8: its upper quantile reaches 0.8, its lower does not; bin 2 is sure
    edge = counts_from({0: (0, 100), 1: (80, 100), 2: (100, 100)})
    interval = pair_bootstrap_interval(edge, rng)
    assert (interval.mdad, interval.lower, interval.upper) == (0.5, 0.0, 1.0)  # symmetric by the larger side
    # no bin's lower quantile reaches 0.8: the upper end is the sentinel, the lower end goes negative
    weak = counts_from({0: (0, 100), 4: (16, 20)})
    interval = pair_bootstrap_interval(weak, rng)
    assert interval.mdad == 2.0 and interval.upper == 50.0 and interval.lower == 2.0 - 48.0


def test_trial_bootstrap_interval():
    rng = np.random.default_rng(1)
    same = counts_from({0: (2, 10), 2: (9, 10)})
    stacked = BinCounts(np.repeat(same.pairs, 5, axis=0), np.repeat(same.correct, 5, axis=0))
    interval = trial_bootstrap_interval(stacked, rng)
    assert (interval.mdad, interval.lower, interval.upper) == (1.0, 1.0, 1.0)
    # trials that disagree: the interval spans their MDADs
    mixed = BinCounts(np.array([[10, 10, 10], [10, 10, 10]]), np.array([[9, 10, 10], [1, 1, 10]]))
    interval = trial_bootstrap_interval(mixed, rng, n_boot=2000)
    assert interval.mdad == 1.0  # pooled: bin 0 0.5, bin 1 0.55, bin 2 1.0
    assert interval.lower == 0.0 and interval.upper == 1.0
