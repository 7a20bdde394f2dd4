"""No traceback reaches a user of the command line (issue 37): every entry point given a folder as
`--out`, a binary file or an empty file where it reads one, or interrupted during a fit, ends with
one line on stderr, a non-zero exit and nothing left behind. Run as a user types it (a process)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from benchcast.data.aggregate import read_benchpress, write_aggregate


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A leaderboard CSV, a one-batch selection's answers, and a small BenchPress matrix."""
    root = tmp_path_factory.mktemp("lab")
    rng = np.random.default_rng(3)
    scores = (rng.random((30, 60)) < np.linspace(0.2, 0.8, 30)[:, None]).astype(int)
    board = pd.DataFrame(scores, columns=[f"q{j}" for j in range(60)])
    board.insert(0, "model_id", [f"m{i}" for i in range(30)])
    board.to_csv(root / "board.csv", index=False)
    pd.DataFrame({"item_id": ["q1", "q2"], "score": [1, 0]}).to_csv(root / "answers.csv", index=False)
    doc = {
        "models": [{"id": f"m{i}", "name": f"M{i}"} for i in range(6)],
        "benchmarks": [{"id": f"b{j}", "name": f"B{j}"} for j in range(4)],
        "observed": [[float(10 * i + j) for j in range(4)] for i in range(6)],
        "sources": [[None] * 4 for _ in range(6)],
    }
    (root / "bp.json").write_text(json.dumps(doc))
    write_aggregate(read_benchpress(root / "bp.json"), root / "bp")
    return root


#: every entry point, with the file it reads as {IN} and its --out (a folder in the first case)
COMMANDS = {
    "select": "select {IN} --method random_sampling --budget 5 --data-dir res --folds 2 --out {OUT}",
    "estimate": "estimate {BOARD} --method random_sampling --answers {IN} --data-dir res --folds 2 --out {OUT}",
    "plan": "plan {IN} --size 10 --models m0,m9 --out {OUT}",
    "complete": "complete {IN} --data {BP} --no-intervals --out {OUT}",
    "leaderboard": "leaderboard from-lm-eval {IN} --out {OUT}",
}
GOOD_INPUT = {"select": "board.csv", "estimate": "answers.csv", "plan": "board.csv", "complete": "known.csv"}


def user_runs(lab, work, command: str, given: str, out: str) -> subprocess.CompletedProcess:
    line = COMMANDS[command].format(IN=given, OUT=out, BOARD=lab / "board.csv", BP=lab / "bp")
    return subprocess.run([sys.executable, "-m", "benchcast", *line.split()], capture_output=True, text=True, cwd=work)


def everything(folder) -> set[str]:
    """Every path under ``folder`` but a fit's build lock (an empty file that marks no output)."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.name != ".build.lock"}


def one_line_and_nothing_left(proc, work, before: set[str]) -> str:
    err = proc.stderr.strip()
    assert proc.returncode != 0 and "Traceback" not in err, err
    assert err.count("\n") == 0 and err.startswith("benchcast: error: "), err
    assert everything(work) == before, everything(work) - before  # no output, no stray temporary file
    return err


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", ["folder as --out", "binary file", "empty file"])
def test_each_entry_point_ends_bad_input_in_one_line_and_leaves_nothing(lab, tmp_path, command, case):
    work = tmp_path / "work"
    (work / "somedir").mkdir(parents=True)
    (work / "board.csv").write_bytes((lab / "board.csv").read_bytes())
    (work / "answers.csv").write_bytes((lab / "answers.csv").read_bytes())
    (work / "known.csv").write_text("benchmark_id,score\nb0,5\n")
    (work / "binary.csv").write_bytes(np.random.default_rng(0).bytes(3000) + b"\xff\xfe")
    (work / "empty.csv").write_bytes(b"")
    given = {"folder as --out": GOOD_INPUT.get(command, "somedir"), "binary file": "binary.csv"}.get(case, "empty.csv")
    out = "somedir/" if case == "folder as --out" else "out.csv" if command != "leaderboard" else "out.parquet"
    before = everything(work)
    err = one_line_and_nothing_left(user_runs(lab, work, command, given, out), work, before)
    if case == "folder as --out":
        assert "is a folder, not a file" in err
    elif command != "leaderboard":  # (a harness leaderboard reads folders of samples_*.jsonl: any file is refused)
        assert ("is not UTF-8 text" if case == "binary file" else "empty") in err


def test_the_good_inputs_of_these_cases_work(lab, tmp_path):
    """The cases above fail for the reason they name: the same commands with good files succeed."""
    work = tmp_path
    for name in ("board.csv", "answers.csv"):
        (work / name).write_bytes((lab / name).read_bytes())
    (work / "known.csv").write_text("benchmark_id,score\nb0,5\n")
    for command in ("select", "plan", "complete"):
        proc = user_runs(lab, work, command, GOOD_INPUT[command], f"{command}.csv")
        assert proc.returncode == 0 and (work / f"{command}.csv").is_file(), proc.stderr


def as_in_a_terminal() -> None:
    """Ctrl-C's default action in the command, as a terminal gives it: a test run started in the
    background (CI's) passes an ignored Ctrl-C down to every process it starts."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


#: the lines a fit prints before it is done (benchcast.new_model.api.build_plan, fits.calibrate)
FIT_PROGRESS = ("building the gp_irt fit", "fitted on all", "calibrating on", "calibration fold", "the other ")


def test_an_interrupt_during_a_fit_ends_in_one_line_with_exit_130_and_nothing_written(lab, tmp_path):
    (tmp_path / "board.csv").write_bytes((lab / "board.csv").read_bytes())
    before = everything(tmp_path)
    argv = ["select", "board.csv", "--method", "gp_irt", "--budget", "10", "--data-dir", "res", "--out", "items.csv"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchcast", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        text=True,
        preexec_fn=as_in_a_terminal,
    )
    lines = []
    for line in proc.stderr:  # Ctrl-C as the calibration starts: its folds are still to fit
        lines.append(line)
        if line.startswith("calibrating on"):
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and out == "", (out, err)
    *progress, last = err.strip().splitlines()  # the fit's own progress lines may come first
    assert last == "benchcast: interrupted; nothing was left half-written", err
    assert all(line.startswith(FIT_PROGRESS) for line in progress), err
    assert everything(tmp_path) - before <= {"res", "res/models"} | {
        str(p.relative_to(tmp_path)) for p in (tmp_path / "res").rglob("*") if p.is_dir()
    }  # at most empty folders: no items.csv, no fit, no temporary file


@pytest.mark.parametrize("delay", [0.0, 2.0])
def test_ctrl_c_in_a_terminal_stops_the_calibration_processes_too(tmp_path, delay):
    """Ctrl-C in a terminal signals the whole process group: the command and the processes
    calibrating its fit (--cores 2). One line, exit 130, no process left, nothing written."""
    rng = np.random.default_rng(4)
    ability = rng.normal(size=(240, 1))
    # 2,000 items: the pooled folds fit for several seconds (0.4 s a fold at 500 items on an idle
    # machine left the 2 s case racing the end of the command)
    items = 2000
    scores = (rng.random((240, items)) < 1 / (1 + np.exp(rng.normal(size=(1, items)) - ability))).astype(int)
    board = pd.DataFrame(scores, columns=[f"q{j}" for j in range(items)])
    board.insert(0, "model_id", [f"m{i}" for i in range(240)])
    board.to_csv(tmp_path / "board.csv", index=False)
    before = everything(tmp_path)
    argv = "select board.csv --method gp_irt --budget 40 --data-dir res --cores 2 --folds 10 --out items.csv"
    # `python -m benchcast ...`, with the calibration's processes started whatever the first fold's
    # seconds (on a fast machine they say one process is enough, and there is nothing to stop)
    pooled = (
        "import runpy, sys; import benchcast.new_model.fits as fits; fits.POOL_WORTH_SECONDS = 0.0; "
        "sys.argv = ['benchcast', *sys.argv[1:]]; runpy.run_module('benchcast', run_name='__main__')"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", pooled, *argv.split()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job has
        preexec_fn=as_in_a_terminal,
    )
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("the other 9 folds on 2 processes"):  # the calibration processes start
            break
    time.sleep(delay)  # 0: while they import the library (a traceback there was a bug); later: fitting
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and out == "", (out, err)
    *progress, last = err.strip().splitlines()
    assert last == "benchcast: interrupted; nothing was left half-written", err
    assert all(line.startswith(FIT_PROGRESS) for line in lines + progress), err
    time.sleep(1)
    group = subprocess.run(["ps", "-o", "pid=,stat=,args=", "-g", str(proc.pid)], capture_output=True, text=True)
    left = [p for p in group.stdout.splitlines() if p.split()[1][0] != "Z"]  # (an exited, unreaped one is gone)
    assert left == [], f"processes of the interrupted command still running: {left}"
    assert everything(tmp_path) - before <= {"res", "res/models"} | {
        str(p.relative_to(tmp_path)) for p in (tmp_path / "res").rglob("*") if p.is_dir()
    }
