"""The synthetic leaderboards of the scaling benchmark: reproducible and shaped like real ones."""

import numpy as np
import pytest

from benchcast.scaling.synthetic import Shape, leaderboard


def test_same_arguments_same_bytes_whatever_the_block_size():
    a = leaderboard(120, 900, seed=3)
    b = leaderboard(120, 900, seed=3, shape=Shape(block_cells=1000))  # 1 row a block instead of all
    assert a.scores.dtype == np.uint8 and a.scores.shape == (120, 900)
    assert a.scores.tobytes() == b.scores.tobytes()
    assert not np.array_equal(a.scores, leaderboard(120, 900, seed=4).scores)


def test_subtasks_are_uneven_and_cover_every_item():
    board = leaderboard(50, 5000, seed=0)
    sizes = np.bincount(board.subtasks)
    assert len(sizes) == 20 and sizes.sum() == 5000 and sizes.min() >= 1
    assert sizes.max() > 2 * sizes.min()
    assert (np.diff(board.subtasks) >= 0).all()  # contiguous, as a leaderboard lists its subtasks


def test_near_constant_items_and_a_general_ability():
    board = leaderboard(400, 3000, seed=1)
    p = board.scores.mean(axis=0)
    constant = (p < 0.01) | (p > 0.99)
    assert 0.05 < constant.mean() < 0.12  # Shape.constant_share = 0.08, plus easy items by chance
    centred = board.scores - board.scores.mean(axis=0)
    sv = np.linalg.svd(centred, compute_uv=False)
    share = sv**2 / (sv**2).sum()
    assert share[0] > 5 * share[1]  # one component dominates, as on real leaderboards


def test_near_duplicate_models():
    board = leaderboard(300, 2000, seed=2)
    ability = board.ability
    distance = np.linalg.norm(ability[:, None] - ability[None], axis=2) + np.eye(300) * 1e9
    close = distance.min(axis=1) < 0.2  # duplicate_noise 0.05 in 4 dimensions: about 0.1 apart
    assert 0.15 < close.mean() < 0.45  # the copies and the models they copy
    agree = [(board.scores[i] == board.scores[np.argmin(distance[i])]).mean() for i in np.flatnonzero(close)]
    assert np.mean(agree) > 0.75


def test_refuses_a_degenerate_size():
    with pytest.raises(ValueError, match="at least 2 models"):
        leaderboard(1, 10)
