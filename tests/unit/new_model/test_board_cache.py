"""A user's leaderboard file is read once: later calls on the same bytes read its stored bits, with
the same checksum, ids, scores and accuracies, without making the float64 matrix unless a fit needs it."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from benchcast.errors import DataError
from benchcast.new_model import board_cache
from benchcast.new_model import leaderboard as lb
from benchcast.new_model.api import estimate, select


def write_board(path, scores):
    frame = pd.DataFrame(scores.astype(int), columns=[f"q{j}" for j in range(scores.shape[1])])
    frame.insert(0, "model_id", [f"m{i}" for i in range(len(scores))])
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path


def checksum_as_before(matrix) -> str:
    """The checksum as it was computed from the whole float64 matrix at once."""
    h = hashlib.sha256()
    for ids in (matrix.model_ids, matrix.item_ids):
        h.update("\x1f".join(map(str, ids)).encode("utf-8") + b"\x1e")
    h.update(np.ascontiguousarray(matrix.scores, dtype="<f8").tobytes())
    return h.hexdigest()


@pytest.fixture
def scores():
    rng = np.random.default_rng(5)
    return (rng.random((600, 77)) < np.linspace(0.1, 0.9, 600)[:, None]).astype(float)  # 77: not a multiple of 8


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_the_second_read_is_the_stored_bits_with_the_same_everything(tmp_path, scores, suffix, monkeypatch):
    path = write_board(tmp_path / f"board{suffix}", scores)
    first = lb.load_leaderboard(str(path), tmp_path / "data")
    assert first.checksum == checksum_as_before(first.matrix)  # blocks of rows hash the same bytes
    assert not (tmp_path / "data" / "boards").exists()  # stored only once a command used it
    first.remember()
    monkeypatch.setattr(lb, "_read_user_matrix", lambda p: pytest.fail("the file was parsed again"))
    second = lb.load_leaderboard(str(path), tmp_path / "data")
    assert isinstance(second.matrix, board_cache.PackedResponseMatrix)
    assert (second.key, second.checksum) == (first.key, first.checksum)
    assert second.matrix.model_ids == first.matrix.model_ids and second.matrix.item_ids == first.matrix.item_ids
    assert second.matrix.subtasks == first.matrix.subtasks and second.matrix.shape == scores.shape
    assert np.array_equal(second.matrix.accuracy(), first.matrix.scores.mean(axis=1))  # bit for bit
    assert second.matrix._scores is None  # the float64 matrix is not made for these
    assert np.array_equal(second.matrix.scores, scores) and second.matrix.scores.flags.c_contiguous
    assert board_cache.matrix_checksum(second.matrix) == first.checksum


def test_other_bytes_are_another_board(tmp_path, scores):
    path = write_board(tmp_path / "board.csv", scores)
    lb.load_leaderboard(str(path), tmp_path / "data").remember()
    scores[0, 0] = 1 - scores[0, 0]
    write_board(path, scores)
    again = lb.load_leaderboard(str(path), tmp_path / "data")
    assert not isinstance(again.matrix, board_cache.PackedResponseMatrix)  # the edited file is read
    assert again.checksum == checksum_as_before(again.matrix)
    assert len(list((tmp_path / "data" / "boards").iterdir())) == 1


def test_select_and_estimate_give_the_same_from_the_file_and_from_the_bits(tmp_path, scores):
    path = write_board(tmp_path / "board.csv", scores)
    kw = {"data_dir": tmp_path / "data", "folds": 3, "log": lambda s: None}
    items = select(str(path), "random_sampling", 20, **kw)  # builds the fit, then stores the board
    assert len(list((tmp_path / "data" / "boards").glob("*/matrix.parquet"))) == 1
    answers = {i: float(scores[5, int(i[1:])]) for i in items.items.item_id}
    from_bits = estimate(str(path), "random_sampling", answers, **kw)
    (stored,) = (tmp_path / "data" / "boards").glob("*/matrix.parquet")
    stored.unlink()
    from_file = estimate(str(path), "random_sampling", answers, **kw)
    assert from_bits == from_file


def test_a_damaged_stored_board_stops_in_one_line_naming_it(tmp_path, scores):
    path = write_board(tmp_path / "board.csv", scores)
    lb.load_leaderboard(str(path), tmp_path / "data").remember()
    (stored,) = (tmp_path / "data" / "boards").glob("*/matrix.parquet")
    stored.write_bytes(stored.read_bytes()[:100])
    with pytest.raises(DataError, match="not a readable stored leaderboard") as err:
        lb.load_leaderboard(str(path), tmp_path / "data")
    assert str(stored.parent) in str(err.value)


def test_a_fit_built_from_the_stored_bits_is_the_fit_built_from_the_file(tmp_path, scores):
    """Another method on a stored board unpacks the float64 matrix for its fit (calibration folds on
    two processes included): the same stored fit as from the file itself."""
    path = write_board(tmp_path / "board.csv", scores)
    kw = {"folds": 3, "log": lambda s: None, "cores": 2}
    select(str(path), "random_sampling", 20, data_dir=tmp_path / "a", **kw)  # stores the board under a/
    via_bits = select(str(path), "aipw", 20, data_dir=tmp_path / "a", **kw)
    via_file = select(str(path), "aipw", 20, data_dir=tmp_path / "b", **kw)
    assert via_bits.items.equals(via_file.items)
    folder = "models/board-{}/aipw/n=20/calibration.parquet"
    key = lb.load_leaderboard(str(path), tmp_path / "a").checksum[:12]
    a, b = (pd.read_parquet(tmp_path / d / folder.format(key)) for d in "ab")
    pd.testing.assert_frame_equal(a, b)
