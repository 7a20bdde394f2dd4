"""The console of a workflow run as a user sees it (Snakemake as a subprocess, the way it is typed):
on a terminal, profiles/default selects the progress display (``--logger benchcast``: jobs done,
running, time left) and keeps rule-by-rule detail in .snakemake/log/; into a pipe (CI, tests) the
plain lines that tests and scripts parse; after a run, one line on where the results (or the
failed run's log) are. Toy data: each run takes seconds."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import termios
from pathlib import Path

import joblib
import pytest
from helpers import REPO, SNAKEMAKE, snakemake
from test_workflow import make_workdir

from benchcast.workflow.dag import parse_dry_run

pytestmark = pytest.mark.e2e

TARGET = "results/data/toy_a/responses.parquet"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]")


def on_a_terminal(workdir: Path, *args: str, timeout: float = 300, **env: str) -> tuple[int, str]:
    """Snakemake run on a pseudo-terminal (stdin, stdout and stderr), 120 columns; its exit code
    and everything it wrote, escape sequences removed."""
    main, child = os.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40", **env}
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CI"):
        env.pop(name, None)
    cmd = [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *args]
    proc = subprocess.Popen(cmd, cwd=workdir, stdin=child, stdout=child, stderr=child, env=env, close_fds=True)
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 1 << 16)
        except OSError:  # the terminal's other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    code = proc.wait(timeout=timeout)
    return code, ANSI.sub("", b"".join(chunks).decode(errors="replace")).replace("\r", "\n")


@pytest.fixture
def toy(tmp_path) -> Path:
    return make_workdir(tmp_path / "toy", methods=[{"name": "random_sampling"}], trials=1)


def test_into_a_pipe_the_dry_run_is_snakemakes_plain_lines(toy):
    """Not a terminal: the default profile is used, no progress display, the plain job listing and
    'Job stats:' table that tests and scripts parse."""
    proc = snakemake(toy, "-n", TARGET)
    assert "workflow specific profile" in proc.stderr and "profiles/default" in proc.stderr
    assert "Workflow Progress" not in proc.stdout + proc.stderr
    assert [job.rule for job in parse_dry_run(proc.stdout)] == ["ingest_item_dataset"]
    assert "Job stats:" in proc.stdout


def test_on_a_terminal_the_dry_run_is_the_progress_displays_summary(toy):
    code, out = on_a_terminal(toy, "-n", TARGET)
    assert code == 0, out[-3000:]
    assert "ingest item dataset" in out  # the plugin's table (rule names with spaces)
    assert "rule ingest_item_dataset:" not in out and "Job stats:" not in out
    assert "This was a dry-run" in out
    code, out = on_a_terminal(toy, "-n", TARGET, BENCHCAST_CONSOLE="plain")  # the plain lines asked for
    assert code == 0 and "rule ingest_item_dataset:" in out and "Job stats:" in out


def test_on_a_terminal_a_run_shows_progress_and_keeps_rule_detail_in_the_log(toy):
    """Jobs done of all, running and time left on screen; the job's rule block (input, output,
    log, ...) only in Snakemake's log file; at the end where the results come from."""
    code, out = on_a_terminal(toy, TARGET, "--cores", "1")
    assert code == 0, out[-3000:]
    bar = [line for line in out.splitlines() if "Total Progress" in line]
    assert any("0/1" in line and "1 running" in line and "left ?" in line for line in bar), bar[:3]
    assert any("1/1" in line and "done" in line for line in bar), bar[-3:]
    assert "localrule ingest_item_dataset:" not in out and "Shell command" not in out
    assert "Done. The index of all results, results/index.md, and the report come with" in out
    (log,) = (toy / ".snakemake" / "log").glob("*.snakemake.log")
    detail = log.read_text()
    assert "localrule ingest_item_dataset:" in detail and "output: results/data/toy_a/responses.parquet" in detail
    assert "Shell command: None" not in detail  # the default profile prints no shell commands


def test_the_end_of_a_run_says_where_the_results_are(toy):
    proc = snakemake(toy, TARGET, "--cores", "1")
    last = proc.stderr.strip().splitlines()[-3:]
    assert last[0] == (
        "Done. The index of all results, results/index.md, and the report come with: snakemake --cores all"
    )
    assert last[1].startswith("Complete log(s): ") and last[2].startswith("Elapsed time: ")
    assert "Shell command: None" not in proc.stderr
    # quiet runs stay quiet (README's ingest step runs with --quiet)
    quiet = snakemake(toy, TARGET, "--cores", "1", "--forcerun", "--quiet")
    assert "Done." not in quiet.stdout + quiet.stderr


def test_a_failed_run_ends_with_where_its_log_is(toy):
    scores = toy / "raw/benchmark-prediction/data/scores"
    matrix = joblib.load(scores / "toy_a.jbl")
    matrix[2, 5] = 0.5
    joblib.dump(matrix, scores / "toy_a.jbl")
    proc = snakemake(toy, TARGET, "--cores", "1", check=False)
    assert proc.returncode != 0
    (log,) = (toy / ".snakemake" / "log").glob("*.snakemake.log")
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("Stopped by a failed job")]
    assert f"the whole run's log: .snakemake/log/{log.name}." in line
