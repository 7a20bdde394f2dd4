"""``--method auto`` (issue 56 item 3): the method with the lowest held-out error on the
leaderboard at hand, from the stored fits' cross-validation, said with the runner-up."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from benchcast.new_model.auto import Choice, choose_method, rank
from benchcast.new_model.leaderboard import load_leaderboard

FAST = ["random_sampling", "aipw", "random_sampling_learn"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    rng = np.random.default_rng(11)
    models, items = 90, 150
    ability = rng.normal(size=(models, 1))
    scores = (rng.random((models, items)) < 1 / (1 + np.exp(rng.normal(size=(1, items)) - 2 * ability))).astype(int)
    root = tmp_path_factory.mktemp("auto")
    board = pd.DataFrame(scores, columns=[f"q{j}" for j in range(items)])
    board.insert(0, "model_id", [f"m{i}" for i in range(models)])
    board.to_csv(root / "board.csv", index=False)
    return root


def test_the_lowest_held_out_error_wins_and_the_choice_is_stored(lab):
    said = []
    choice = choose_method(str(lab / "board.csv"), 20, FAST, lab / "res", log=said.append)
    board = load_leaderboard(str(lab / "board.csv"), lab / "res")
    errors = {}
    for name in FAST:
        folder = next((lab / "res" / "models").glob(f"*/{name}/n=20"))
        cal = pd.read_parquet(folder / "calibration.parquet")
        errors[name] = float((cal.estimate - cal.truth).abs().mean())
    best = min(FAST, key=lambda m: (errors[m], FAST.index(m)))
    assert choice.method == best and list(choice.table.method) == sorted(FAST, key=lambda m: (errors[m], FAST.index(m)))
    assert choice.table.mae.tolist() == pytest.approx(sorted(errors.values()))
    assert (choice.table.models == len(board.matrix.model_ids)).all()
    assert "runner-up" in choice.reason(20) and choice.table.method[1] in choice.reason(20)
    # each candidate's excess over the chosen, paired over the models, and whether it is tied
    runner = choice.table.iloc[1]
    cal = {n: pd.read_parquet(next((lab / "res" / "models").glob(f"*/{n}/n=20")) / "calibration.parquet") for n in FAST}
    diff = [(cal[n].set_index("model_id").pipe(lambda c: (c.estimate - c.truth).abs())) for n in (runner.method, best)]
    excess = (diff[0] - diff[1].reindex(diff[0].index)).to_numpy()
    assert runner.excess == pytest.approx(excess.mean()) and runner.excess > 0
    assert runner.excess_se == pytest.approx(excess.std(ddof=1) / np.sqrt(len(excess)))
    assert choice.tied == [m for m, t in zip(choice.table.method[1:], choice.table.tied[1:]) if t]
    # the second call reads the stored fits: nothing is built, the same choice
    again = []
    assert choose_method(str(lab / "board.csv"), 20, FAST, lab / "res", log=again.append).method == best
    assert not any("building" in line for line in again) and any("building" in line for line in said)


def benchcast(lab, *argv):
    return subprocess.run([sys.executable, "-m", "benchcast", *argv], capture_output=True, text=True, cwd=lab)


def test_select_and_estimate_with_auto_name_the_chosen_method(lab):
    common = ["board.csv", "--budget", "20", "--data-dir", "res", "--candidates", *FAST]
    sel = benchcast(lab, "select", *common[:1], "--method", "auto", *common[1:], "--out", "auto.csv")
    assert sel.returncode == 0, sel.stderr
    chosen = choose_method(str(lab / "board.csv"), 20, FAST, lab / "res", log=lambda _: None).method
    assert f"--method auto: {chosen} has the lowest held-out error at n=20" in sel.stderr
    assert f"benchcast estimate board.csv --method {chosen} --budget 20" in sel.stdout  # the next step names it
    items = pd.read_csv(lab / "auto.csv")
    items.assign(score=np.arange(len(items)) % 2).to_csv(lab / "auto.csv", index=False)
    by_auto = benchcast(lab, "estimate", "board.csv", "--method", "auto", *common[1:], "--answers", "auto.csv",
                        "--out", "e_auto.json")  # fmt: skip
    by_name = benchcast(lab, "estimate", "board.csv", "--method", chosen, "--budget", "20", "--data-dir", "res",
                        "--answers", "auto.csv", "--out", "e_name.json")  # fmt: skip
    assert by_auto.returncode == 0 and by_name.returncode == 0, by_auto.stderr + by_name.stderr
    assert json.loads((lab / "e_auto.json").read_text()) == json.loads((lab / "e_name.json").read_text())


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["estimate", "board.csv", "--method", "auto", "--answers", "auto.csv"], "--method auto chooses at a budget"),
        (["select", "board.csv", "--method", "aipw", "--candidates", "aipw", "--budget", "5", "--out", "x.csv"],
         "--candidates goes with --method auto"),
        (["select", "board.csv", "--method", "auto", "--params", "{}", "--budget", "5", "--out", "x.csv"],
         "with --method auto, drop --params"),
        (["select", "board.csv", "--method", "auto", "--candidates", "nope", "--budget", "5", "--out", "x.csv"],
         "nope"),
    ],
)  # fmt: skip
def test_auto_misuse_is_refused_in_one_line(lab, tmp_path, argv, says):
    (tmp_path / "board.csv").write_bytes((lab / "board.csv").read_bytes())
    (tmp_path / "auto.csv").write_text("item_id,score\nq1,1\n")
    done = benchcast(tmp_path, *argv, "--data-dir", "res")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr
    assert not (tmp_path / "x.csv").exists()


def test_rank_known_answer_paired_excess_and_ties():
    models = ["a", "b", "c", "d"]
    errors = {
        "first": pd.Series([0.10, 0.18, 0.30, 0.42], index=models),  # mean 0.25
        "close": pd.Series([0.12, 0.18, 0.36, 0.38], index=models[::-1]).reindex(models[::-1]),  # mean 0.26
        "far": pd.Series([0.20, 0.30, 0.40, 0.50], index=models),  # mean 0.35, +0.10 on every model
        "best": pd.Series([0.09, 0.21, 0.28, 0.38], index=models),  # mean 0.24
    }
    table = rank(errors)
    assert table.method.tolist() == ["best", "first", "close", "far"]
    assert table.mae.tolist() == pytest.approx([0.24, 0.25, 0.26, 0.35])
    # paired over the models by name: "close" lists them in reverse
    close = errors["close"].reindex(models).to_numpy() - errors["best"].to_numpy()
    row = table.set_index("method").loc["close"]
    assert row.excess == pytest.approx(close.mean())
    assert row.excess_se == pytest.approx(np.std(close, ddof=1) / 2)
    # "far" is worse by 0.11 +- 0.0071: not tied; "first" by 0.01 +- 0.0147: tied; the chosen ties itself
    far = table.set_index("method").loc["far"]
    assert far.excess == pytest.approx(0.11) and far.excess_se == pytest.approx(0.02**0.5 / 20) and not far.tied
    first = table.set_index("method").loc["first"]
    assert first.excess == pytest.approx(0.01) and first.excess_se == pytest.approx(0.0026**0.5 / 3**0.5 / 2)
    assert table.set_index("method").loc["first"].tied and table.tied[0] and table.excess[0] == 0
    choice = Choice("best", table)
    assert choice.tied == [m for m in ["first", "close"] if table.set_index("method").loc[m].tied]
    said = choice.reason(50)
    assert "runner-up first: 25.00 points (+1.00 +- " in said and "which this leaderboard cannot tell apart" in said
    # equal means: the earlier candidate first
    assert rank({"x": errors["first"], "y": errors["first"].copy()}).method.tolist() == ["x", "y"]
    alone = rank({"far": errors["far"], "best": errors["best"]})
    assert "no other candidate within one standard error" in Choice("best", alone).reason(50)
