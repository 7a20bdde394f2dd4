"""Interrupted runs resume exactly (issue 39): the whole Snakemake process group killed (SIGKILL) at
three points of a small run -- while ingesting, among the run jobs, among the tables; one run killed
at each in turn, each time resumed with the README's command -- or stopped with Ctrl-C (SIGINT), then
run again, gives the bytes of an uninterrupted run; after each kill, every output file already there
is whole (the uninterrupted run's bytes).
Only wall-clock seconds may differ (the timing files ``scripts/results_digest.py`` leaves out)."""

from __future__ import annotations

import ast
import importlib.util
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers import REPO, SNAKEMAKE, snakemake
from test_workflow import make_workdir

pytestmark = pytest.mark.e2e

METHODS = [
    {"name": "random_sampling"},
    {"name": "aipw", "params": {"alpha": 10.0}},
    {"name": "lasso", "params": {"n_alphas": 30}},
    {"name": "pca", "params": {"k_grid": [2, 5]}},
    {"name": "gp_irt"},
]

_spec = importlib.util.spec_from_file_location("results_digest", REPO / "scripts" / "results_digest.py")
results_digest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(results_digest)


def outputs(work: Path) -> dict[str, bytes]:
    """Every file under ``results/`` but the timing files and the temporary files of writes a kill
    cut short (hidden ``.<name>.<random>.tmp``: never read, see docs/reliability.md)."""
    root = work / "results"
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not results_digest.is_timing(p.relative_to(root)) and not _temporary(p)
    }


def _temporary(p: Path) -> bool:
    return p.name.startswith(".") and p.name.endswith(".tmp")


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, dict[str, bytes], int]:
    """The uninterrupted run: its outputs and how many jobs it ran."""
    work = make_workdir(tmp_path_factory.mktemp("whole"), methods=METHODS, trials=2)
    proc = snakemake(work, "--cores", "2")
    return work, outputs(work), proc.stderr.count("Finished job") + proc.stdout.count("Finished job")


def interrupted(
    work: Path, after_jobs: int, sig: signal.Signals, fresh: bool = True
) -> tuple[Path, subprocess.CompletedProcess]:
    """A run (the README's command, two cores) in ``work`` -- a fresh work folder made there, unless
    ``fresh`` is false -- that gets ``sig`` -- sent to the whole process group, as a terminal's Ctrl-C
    or a killed session does -- once ``after_jobs`` of its jobs have finished."""
    if fresh:
        work = make_workdir(work, methods=METHODS, trials=2)
    log = work / "interrupted.log"
    cmd = [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(work), "--cores", "2"]
    with open(log, "w") as fh:
        # a terminal's Snakemake takes Ctrl-C; one started from a background job of a script inherits
        # SIGINT ignored (bash ignores it in asynchronous commands) and would run on: reset it
        proc = subprocess.Popen(
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=work,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    while proc.poll() is None and log.read_text().count("Finished job") < after_jobs:
        time.sleep(0.05)
    assert proc.poll() is None, f"the run ended before {after_jobs} jobs:\n{log.read_text()[-2000:]}"
    os.killpg(proc.pid, sig)
    # Snakemake's log handler drops a KeyboardInterrupt raised while it writes a line
    # (snakemake/logging.py: ``except (KeyboardInterrupt, SystemExit): pass``), so a Ctrl-C can be
    # lost; a user presses it again. Again only while Snakemake has not said it is stopping.
    for _ in range(3):
        if (
            sig != signal.SIGINT
            or proc.poll() is not None
            or "Terminating processes on user request" in log.read_text()
        ):
            break
        time.sleep(1)
        if proc.poll() is None and "Terminating processes on user request" not in log.read_text():
            os.killpg(proc.pid, sig)
    proc.wait(timeout=600)
    return work, subprocess.CompletedProcess(cmd, proc.returncode, log.read_text(), "")


def whole_or_absent(work: Path, expected: dict[str, bytes]) -> None:
    """Every output the interrupted run left has the uninterrupted run's bytes."""
    left = outputs(work)
    assert left, "the interrupted run wrote nothing"
    assert set(left) < set(expected), sorted(set(left) - set(expected))
    broken = [name for name, data in left.items() if data != expected[name]]
    assert not broken, broken


def test_a_run_killed_at_any_point_resumes_to_the_same_bytes(reference, tmp_path):
    """Killed while ingesting, then (resumed) among the run jobs, then (resumed) among the tables:
    each kill leaves only whole outputs and Snakemake's lock, and the last resume gives the bytes."""
    _, expected, jobs = reference
    work, done = tmp_path, 0
    for point, total in (("ingest", 1), ("runs", jobs // 2), ("tables", jobs - 4)):
        work, killed = interrupted(work, max(1, total - done), signal.SIGKILL, fresh=point == "ingest")
        done += killed.stdout.count("Finished job")
        assert killed.returncode == -signal.SIGKILL, point
        whole_or_absent(work, expected)
        # Snakemake's lock outlives a kill: the next run stops and says what to run
        locked = snakemake(work, "--cores", "2", check=False)
        said = locked.stdout + locked.stderr
        assert locked.returncode != 0 and "--unlock" in said, (point, said[-2000:])
        snakemake(work, "--unlock")
    assert done < jobs, "every job finished before the last kill"
    resumed = snakemake(work, "--cores", "2")  # the README's command: the profile reruns incomplete jobs
    assert "Nothing to be done" not in resumed.stderr
    assert outputs(work) == expected


def test_ctrl_c_stops_cleanly_and_the_next_run_resumes_to_the_same_bytes(reference, tmp_path):
    _, expected, jobs = reference
    work, stopped = interrupted(tmp_path, jobs // 2, signal.SIGINT)
    assert stopped.returncode != 0, stopped.stdout[-4000:]
    whole_or_absent(work, expected)
    snakemake(work, "--cores", "2")  # no unlock needed: Snakemake released its lock
    assert outputs(work) == expected


def test_no_workflow_script_writes_an_output_in_place():
    """Every output a job writes goes through a temporary file and a rename
    (:mod:`benchcast.data.io`), so that a killed job leaves no complete-looking file: a script's
    writing calls may only write to a temporary name (``tmp...``) or an open handle (``fh``)."""
    offenders = []
    for path in sorted((REPO / "workflow" / "scripts").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            target = _written(node)
            if target is not None and not (isinstance(target, ast.Name) and target.id.startswith(("tmp", "fh"))):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not offenders, offenders


def _written(node: ast.AST) -> ast.expr | None:
    """What a call writes to, if it is one of the in-place writers: ``x.to_csv(target)``,
    ``to_parquet``, ``to_json``, ``savefig``, ``np.save[z](target)``, ``target.write_text()``, ``write_bytes``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    name = node.func.attr
    if name in ("write_text", "write_bytes"):
        return node.func.value
    if name in ("to_csv", "to_parquet", "savefig", "save", "savez", "savez_compressed") and node.args:
        if name.startswith("save") and name != "savefig" and ast.unparse(node.func.value) != "np":
            return None
        return node.args[0]
    return None
