"""``benchcast plan`` on a models x items CSV the test writes, and on an ingested dataset folder."""

import numpy as np
import pandas as pd
import pytest

from benchcast.cli import main
from benchcast.new_model.planner import model_pairs, required_items


@pytest.fixture()
def leaderboard(tmp_path):
    rng = np.random.default_rng(0)
    ability = np.linspace(0.3, 0.8, 30)
    scores = (rng.random((30, 400)) < ability[:, None]).astype(int)
    frame = pd.DataFrame(scores, columns=[f"q{j}" for j in range(400)])
    frame.insert(0, "model", [f"m{i}" for i in range(30)])
    path = tmp_path / "board.csv"
    frame.to_csv(path, index=False)
    return path, scores


def test_difference_gives_the_planners_item_count(leaderboard, capsys):
    path, scores = leaderboard
    assert main(["plan", str(path), "--difference", "5"]) == 0
    out = capsys.readouterr().out
    pairs = model_pairs(scores)
    q = pairs[(pairs.d - 0.05).abs() <= 0.005].q.median()
    assert f"Random items needed to rank them right 80% of the time: {required_items(0.05, q, pool=400)} " in out


def test_size_and_models(leaderboard, capsys, tmp_path):
    path, _ = leaderboard
    assert main(["plan", str(path), "--size", "50"]) == 0
    assert "50 random items of 400" in capsys.readouterr().out
    out_csv = tmp_path / "pairs.csv"
    assert main(["plan", str(path), "--size", "50", "--models", "m0,m15,m29", "--out", str(out_csv)]) == 0
    table = pd.read_csv(out_csv)
    assert table[["model_a", "model_b"]].values.tolist() == [["m0", "m15"], ["m0", "m29"], ["m15", "m29"]]
    assert table.resolved.tolist() == [True, True, True]  # 25-50 points apart
    assert (table.p_right >= 0.8).all()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--size", "50", "--models", "m0,nobody"], "--models 'nobody'': no such model"),
        (["--size", "50", "--difference", "3"], "give exactly one"),
        (["--size", "400"], "is not between 1 and the 400 items"),
        (["--difference", "3", "--threshold", "1.2"], "--threshold"),
        (["--difference", "3", "--models", "m0,m1"], "needs --size"),
    ],
)
def test_bad_input_names_the_entry_and_the_fix(leaderboard, capsys, args, message):
    path, _ = leaderboard
    assert main(["plan", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Fix:" in err


def test_partial_credit_and_scores_outside_0_1_are_refused(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("model,q1,q2\nm1,1,0\nm2,0.5,1\n")
    assert main(["plan", str(path), "--size", "1"]) == 2
    assert "benchcast plan counts items for 0/1 scores only" in capsys.readouterr().err
    path.write_text("model,q1,q2\nm1,1,0\nm2,2,1\n")
    assert main(["plan", str(path), "--size", "1"]) == 2
    assert "is not a score in [0, 1]" in capsys.readouterr().err


def test_missing_dataset_folder(tmp_path, capsys):
    assert main(["plan", "musr", "--size", "10", "--data-dir", str(tmp_path)]) == 2
    assert "no ingested dataset 'musr' here" in capsys.readouterr().err
