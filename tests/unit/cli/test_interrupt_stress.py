"""Issue 58 item 2: a first fit ends cleanly whenever it is interrupted. The real command
(`benchcast select` building a fit, its calibration folds on 2 processes) gets SIGINT or SIGTERM,
sent to the command alone (as `timeout`, a scheduler or a calling program sends it) or to its
process group (as a terminal's Ctrl-C), at 8 moments spread over the fit: 32 runs. Each moment is a
state the command announced (a line it printed) plus a delay, so the moments are the same on a
fast machine and a slow one (a moment inside the imports was where interrupts got lost: one
inside a compiled module's initialisation came out as an ImportError, or was swallowed). Every run must end within :data:`LIMIT` seconds of the signal, exit
130 (SIGINT) or 143 (SIGTERM) with one line and no traceback (or 0, whole, if it had finished),
leave no process behind, release the build lock and leave no file half-written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from filelock import FileLock

#: seconds a run may take to end after the signal
LIMIT = 10.0
#: (what a line the command printed holds -- None: the start -- and the seconds after it)
MOMENTS = [
    (None, 0.3),  # importing the command line
    ("building the gp_irt fit", 0.2),  # importing the fit's libraries (SciPy, scikit-learn)
    ("fitted on all", 0.0),
    ("calibrating on", 0.0),  # the first fold, in the command
    ("the other 9 folds on 2 processes", 0.0),  # the processes start
    ("the other 9 folds on 2 processes", 0.4),  # they fit
    ("(5 done,", 0.0),  # half the folds
    ("(10 done)", 0.0),  # after calibration: the fit and the items being written
]
SIGNALS = [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
CASES = [
    pytest.param(
        moment,
        sig,
        group,
        id=f"{(moment[0] or 'start').strip('(,)')}+{moment[1]}s-{sig[0].name}-{'group' if group else 'alone'}",
    )
    for moment in MOMENTS
    for sig in SIGNALS
    for group in (False, True)
]
ARGV = "select board.csv --method gp_irt --budget 40 --data-dir res --cores 2 --folds 10 --out items.csv"
#: the command as `benchcast` runs it, except that the folds after the first always go to the
#: processes (the command skips them when the folds would take under 5 s in one process: on a fast
#: machine the moments of the processes would not exist). The module is patched as it is first
#: imported, so that the command's own import guard is the first thing that runs, as for a user.
COMMAND = """
import importlib.util, sys

class PoolAlways:
    def find_spec(self, name, path=None, target=None):
        if name != "benchcast.new_model.fits":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            module.POOL_WORTH_SECONDS = 0.0

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, PoolAlways())
from benchcast.__main__ import run

sys.argv[0] = "benchcast"
sys.exit(run())
"""


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    rng = np.random.default_rng(4)
    ability = rng.normal(size=(240, 1))
    items = 500
    scores = (rng.random((240, items)) < 1 / (1 + np.exp(rng.normal(size=(1, items)) - ability))).astype(int)
    frame = pd.DataFrame(scores, columns=[f"q{j}" for j in range(items)])
    frame.insert(0, "model_id", [f"m{i}" for i in range(240)])
    path = tmp_path_factory.mktemp("board") / "board.csv"
    frame.to_csv(path, index=False)
    return path


def default_signals() -> None:
    """In the command: Ctrl-C's and SIGTERM's default actions, as a terminal or a scheduler gives
    them (a test run started in the background, as CI's is, passes Ctrl-C down ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def alive_in_group(pgid: int) -> list[str]:
    ps = subprocess.run(["ps", "-o", "pid=,stat=,args=", "-g", str(pgid)], capture_output=True, text=True)
    return [p for p in ps.stdout.splitlines() if p.split()[1][0] != "Z"]


def wait_for_line(proc, text: str, seen: list[str]) -> None:
    for line in proc.stderr:
        seen.append(line)
        if text in line:
            return
    raise AssertionError(f"the command ended without printing {text!r}: {''.join(seen)}")


@pytest.mark.parametrize(("moment", "sig", "group"), CASES)
def test_a_first_fit_ends_cleanly_whenever_it_is_interrupted(board, tmp_path, moment, sig, group):
    (signum, code, word), (line, delay) = sig, moment
    (tmp_path / "board.csv").write_bytes(board.read_bytes())
    proc = subprocess.Popen(
        [sys.executable, "-c", COMMAND, *ARGV.split()],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        preexec_fn=default_signals,
    )
    seen: list[str] = []
    try:
        if line is not None:
            wait_for_line(proc, line, seen)
        time.sleep(delay)
        sent = time.monotonic()
        if group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        out, err = proc.communicate(timeout=LIMIT)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    err = "".join(seen) + err
    assert "Traceback" not in err, err
    finished = proc.returncode == 0
    assert proc.returncode == code or finished, (proc.returncode, err)
    if not finished:
        assert err.strip().splitlines()[-1] == f"benchcast: {word}; nothing was left half-written", err
        assert out == "" and not (tmp_path / "items.csv").exists()
    assert took < LIMIT
    # no process left: the command stopped the calibration processes itself (a signal to it alone)
    deadline = time.monotonic() + LIMIT
    while alive_in_group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive_in_group(proc.pid) == []
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not [p for p in files if ".tmp" in p.name], files  # no temporary file
    fits = tmp_path / "res" / "models"
    for folder in {
        p.parent for p in files if p.is_relative_to(fits) and (p.suffix == ".parquet" or p.name == "fit.json")
    }:
        # a fit is whole (its fit.json, written last) or absent: never its parts alone
        assert (folder / "fit.json").exists(), sorted(p.name for p in folder.iterdir())
    for lock in tmp_path.rglob(".build.lock"):
        FileLock(lock).acquire(timeout=0)  # released: the next command builds without waiting
