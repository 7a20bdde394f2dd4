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

#: `python -m benchcast ...` with a hook on each calibration fold: it announces the fold (a file in
#: $MARKS named after its process), fits it, then holds, so that the command is still fitting when the
#: test's Ctrl-C arrives whatever the machine's speed. It holds in the command's own process
#: ($HOLD_IN=command) or only in the calibration processes (=workers: the command's first fold runs
#: through; the pool starts whatever that fold's seconds).
HOOKED = """
import os, pathlib, runpy, sys, time
import benchcast.new_model.fits as fits
command, real = os.getpid(), fits._calibration_fold
def held(*args, **kwargs):
    if os.environ["HOLD_IN"] == "workers" and os.getpid() == command:
        return real(*args, **kwargs)
    pathlib.Path(os.environ["MARKS"], f"fitting.{os.getpid()}").touch()
    result = real(*args, **kwargs)
    time.sleep(3600)
    return result
fits._calibration_fold = held
fits.POOL_WORTH_SECONDS = 0.0
sys.argv = ["benchcast", *sys.argv[1:]]
runpy.run_module("benchcast", run_name="__main__")
"""


def hooked_command(argv: list[str], work, marks, hold_in: str, **popen) -> subprocess.Popen:
    marks.mkdir()
    return subprocess.Popen(
        [sys.executable, "-c", HOOKED, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=work,
        text=True,
        env={**os.environ, "MARKS": str(marks), "HOLD_IN": hold_in},
        preexec_fn=as_in_a_terminal,
        **popen,
    )


def read_until(proc, prefix: str) -> list[str]:
    """The command's stderr lines up to the first that starts with ``prefix`` (the state it announces)."""
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith(prefix):
            return lines
    raise AssertionError(f"the command ended without printing {prefix!r}: {''.join(lines)}")


def wait_for(condition, what: str, proc=None, timeout: float = 300.0) -> None:
    """Poll for a state the command announces; a timeout only bounds a hung or crashed command."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc is None or proc.poll() is None, f"the command ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no {what} after {timeout:.0f}s"
        time.sleep(0.05)


def test_an_interrupt_during_a_fit_ends_in_one_line_with_exit_130_and_nothing_written(lab, tmp_path):
    work, marks = tmp_path / "work", tmp_path / "marks"
    work.mkdir()
    (work / "board.csv").write_bytes((lab / "board.csv").read_bytes())
    before = everything(work)
    argv = ["select", "board.csv", "--method", "gp_irt", "--budget", "10", "--data-dir", "res", "--out", "items.csv"]
    proc = hooked_command(argv, work, marks, "command")
    read_until(proc, "calibrating on")
    wait_for(lambda: any(marks.iterdir()), "calibration fold", proc)  # Ctrl-C during the first fold
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and out == "", (out, err)
    *progress, last = err.strip().splitlines()  # the fit's own progress lines may come first
    assert last == "benchcast: interrupted; nothing was left half-written", err
    assert all(line.startswith(FIT_PROGRESS) for line in progress), err
    assert everything(work) - before <= {"res", "res/models"} | {
        str(p.relative_to(work)) for p in (work / "res").rglob("*") if p.is_dir()
    }  # at most empty folders: no items.csv, no fit, no temporary file


def running_in_group(pgid: int) -> list[str]:
    group = subprocess.run(["ps", "-o", "pid=,stat=,args=", "-g", str(pgid)], capture_output=True, text=True)
    return [p for p in group.stdout.splitlines() if p.split()[1][0] != "Z"]  # (an exited, unreaped one is gone)


@pytest.mark.parametrize("when", ["as they start", "while they fit"])
def test_ctrl_c_in_a_terminal_stops_the_calibration_processes_too(tmp_path, when):
    """Ctrl-C in a terminal signals the whole process group: the command and the processes
    calibrating its fit (--cores 2). One line, exit 130, no process left, nothing written."""
    rng = np.random.default_rng(4)
    ability = rng.normal(size=(240, 1))
    items = 500
    scores = (rng.random((240, items)) < 1 / (1 + np.exp(rng.normal(size=(1, items)) - ability))).astype(int)
    work, marks = tmp_path / "work", tmp_path / "marks"
    work.mkdir()
    board = pd.DataFrame(scores, columns=[f"q{j}" for j in range(items)])
    board.insert(0, "model_id", [f"m{i}" for i in range(240)])
    board.to_csv(work / "board.csv", index=False)
    before = everything(work)
    argv = "select board.csv --method gp_irt --budget 40 --data-dir res --cores 2 --folds 10 --out items.csv"
    # its own process group, as a terminal's foreground job has
    proc = hooked_command(argv.split(), work, marks, "workers", start_new_session=True)
    lines = read_until(proc, "the other 9 folds on 2 processes")  # the calibration processes start
    if when == "while they fit":  # (as they start: while they import the library; a traceback there was a bug)
        wait_for(lambda: any(marks.iterdir()), "calibration process fitting a fold", proc)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and out == "", (out, err)
    *progress, last = err.strip().splitlines()
    assert last == "benchcast: interrupted; nothing was left half-written", err
    assert all(line.startswith(FIT_PROGRESS) for line in lines + progress), err
    # the command joins its pool before it exits; a process the kernel has yet to reap may linger
    wait_for(lambda: running_in_group(proc.pid) == [], "end of the calibration processes", timeout=30)
    assert everything(work) - before <= {"res", "res/models"} | {
        str(p.relative_to(work)) for p in (work / "res").rglob("*") if p.is_dir()
    }


def test_select_again_onto_answered_items_keeps_the_answers(lab, tmp_path):
    """A user who runs the same `select` again, its --out the file they filled in: one line, the
    answers kept; --overwrite is how to ask for the file anew."""
    work = tmp_path
    (work / "board.csv").write_bytes((lab / "board.csv").read_bytes())
    line = "select board.csv --method random_sampling --budget 5 --data-dir res --folds 2 --out items.csv"
    first = subprocess.run([sys.executable, "-m", "benchcast", *line.split()], capture_output=True, text=True, cwd=work)
    assert first.returncode == 0, first.stderr
    items = pd.read_csv(work / "items.csv")
    items.assign(score=[1, 0, 1, 1, 0]).to_csv(work / "items.csv", index=False)
    answered = (work / "items.csv").read_bytes()
    before = everything(work)
    again = subprocess.run([sys.executable, "-m", "benchcast", *line.split()], capture_output=True, text=True, cwd=work)
    err = one_line_and_nothing_left(again, work, before)
    assert "holds 5 answers" in err and "--answers items.csv" in err and "--overwrite" in err
    assert (work / "items.csv").read_bytes() == answered
    # an answers JSON is kept too; a result JSON (estimate's) is not answers and may be written over
    (work / "answers.json").write_text(json.dumps({"q1": 1, "q2": 0}))
    (work / "estimate.json").write_text(json.dumps({"dataset": "board", "estimate": 0.5}))
    est = "estimate board.csv --method random_sampling --data-dir res --folds 2 --answers items.csv --out {}"
    kept = subprocess.run(
        [sys.executable, "-m", "benchcast", *est.format("answers.json").split()],
        capture_output=True,
        text=True,
        cwd=work,
    )
    assert kept.returncode == 2 and "holds 2 answers" in kept.stderr
    written = subprocess.run(
        [sys.executable, "-m", "benchcast", *est.format("estimate.json").split()],
        capture_output=True,
        text=True,
        cwd=work,
    )
    assert written.returncode == 0 and json.loads((work / "estimate.json").read_text())["method"] == "random_sampling"
    forced = subprocess.run(
        [sys.executable, "-m", "benchcast", *line.split(), "--overwrite"], capture_output=True, text=True, cwd=work
    )
    assert forced.returncode == 0 and pd.read_csv(work / "items.csv").score.isna().all()


def test_an_out_in_a_folder_that_cannot_be_written_stops_before_any_fit_naming_the_path(lab, tmp_path):
    work = tmp_path
    (work / "board.csv").write_bytes((lab / "board.csv").read_bytes())
    line = "select board.csv --method random_sampling --budget 5 --data-dir res --folds 2 --out /proc/items.csv"
    before = everything(work)
    err = one_line_and_nothing_left(
        subprocess.run([sys.executable, "-m", "benchcast", *line.split()], capture_output=True, text=True, cwd=work),
        work,
        before,
    )
    assert err.startswith("benchcast: error: /proc/items.csv: field '--out': cannot be written in /proc"), err


def test_a_progress_line_is_one_write_so_an_interrupt_cannot_split_it(monkeypatch):
    """A signal lands between two writes of ``print`` (the text, then its newline): the command's
    last line then followed the progress text on one line (seen once in the stress test). Each
    progress line goes out whole, newline included, in one call."""
    from benchcast.cli import common

    writes: list[str] = []

    class Recorder:
        def write(self, text):
            writes.append(text)

    monkeypatch.setattr(sys, "stderr", Recorder())
    common.log("calibrating on 10 folds of models")
    assert writes == ["calibrating on 10 folds of models\n"]
