"""A full disk (issue 39): a write that fills its filesystem stops with one line naming the file,
the space left and what the file needed, and leaves nothing -- through the library, the command
line and the workflow (an ingest job and a run job). The filesystem is a small tmpfs the test
mounts (as root) and fills; where mounting is not allowed the tests skip with the reason, and
``.ci/run`` sets BENCHCAST_REQUIRE_TMPFS=1 so that a skip there is a failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import REPO, snakemake
from test_workflow import make_workdir

from benchcast.data.io import write_parquet_atomic
from benchcast.errors import DiskFull

SIZE = 64 * 1024  # the tmpfs: 64 KiB, filled before each write


def _unavailable(reason: str):
    if os.environ.get("BENCHCAST_REQUIRE_TMPFS"):
        pytest.fail(f"a full-disk test cannot run: {reason} (BENCHCAST_REQUIRE_TMPFS is set)")
    pytest.skip(reason)


def full_filesystem(mount_point: Path):
    """Mount a 64 KiB tmpfs at ``mount_point`` and fill it; yields the filler's path."""
    mount_point.mkdir(parents=True, exist_ok=True)
    if sys.platform != "linux" or os.geteuid() != 0:
        _unavailable("mounting a tmpfs needs Linux and root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        _unavailable(f"mount -t tmpfs was refused: {mounted.stderr.strip()}")
    filler = mount_point / "filler"
    try:
        with open(filler, "wb") as fh:
            while True:
                fh.write(b"\0" * 4096)
                fh.flush()
    except OSError:
        pass
    return filler


@pytest.fixture
def full(tmp_path):
    """A full filesystem under ``tmp_path/full`` (unmounted afterwards)."""
    mount_point = tmp_path / "full"
    filler = full_filesystem(mount_point)
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=True)
    assert filler  # the fixture's own file


def only_the_filler(folder: Path) -> None:
    """Nothing was written under ``folder`` but the filler (empty folders and a fit's empty lock
    file are not output)."""
    files = [p for p in folder.rglob("*") if p.is_file() and p.name != "filler"]
    assert all(p.name == ".build.lock" and p.stat().st_size == 0 for p in files), files


def test_the_library_names_the_file_and_the_space_and_leaves_nothing(full):
    frame = pd.DataFrame({"x": np.random.default_rng(0).random(20_000)})
    with pytest.raises(DiskFull) as err:
        write_parquet_atomic(frame, full / "table.parquet")
    text = str(err.value)
    assert text.startswith(f"{full / 'table.parquet'}: the disk is full") and "0 B free of 64.0 KiB" in text
    assert "; it needs " in text and "KiB" in text.split("it needs")[1] and "Fix:" in text and "\n" not in text
    only_the_filler(full)


def test_the_command_line_stops_in_one_line_and_leaves_no_fit(full, tmp_path):
    rng = np.random.default_rng(1)
    board = pd.DataFrame((rng.random((40, 200)) < 0.5).astype(int), columns=[f"q{j}" for j in range(200)])
    board.insert(0, "model_id", [f"m{i}" for i in range(40)])
    board.to_csv(tmp_path / "board.csv", index=False)
    cmd = [sys.executable, "-m", "benchcast", "select", "board.csv", "--method", "random_sampling", "--budget", "20"]
    proc = subprocess.run(
        [*cmd, "--data-dir", str(full), "--folds", "3", "--out", "items.csv"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert err[-1].startswith("benchcast: error: ") and "the disk is full" in err[-1] and "free of 64.0 KiB" in err[-1]
    assert str(full) in err[-1]
    only_the_filler(full)
    assert not (tmp_path / "items.csv").exists()


@pytest.mark.e2e
@pytest.mark.parametrize("job", ["ingest", "run"])
def test_a_workflow_job_stops_in_one_line_and_leaves_no_output(tmp_path, job):

    work = make_workdir(tmp_path / "w", methods=[{"name": "random_sampling"}], trials=2)
    run = "results/runs/misses_the_mark/toy_a/interpolation/random_sampling/n=10.parquet"
    if job == "ingest":
        target, rule, mount_point = "results/data/toy_a/responses.parquet", "ingest_item_dataset", work / "results"
    else:  # everything the run job reads is made first, on the ordinary disk
        snakemake(work, "results/splits/misses_the_mark/toy_a/interpolation.parquet", "--cores", "1", "--quiet")
        target, rule, mount_point = run, "mtm_run", work / "results" / "runs"
    full_filesystem(mount_point)
    try:
        proc = snakemake(work, target, "--cores", "1", check=False)
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=True)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith(f"ERROR in rule {rule}")]
    assert proc.returncode != 0 and len(lines) == 1, proc.stderr[-3000:]
    assert "the disk is full" in lines[0] and "0 B free of 64.0 KiB" in lines[0] and "Fix:" in lines[0], lines[0]
    assert "Traceback" not in proc.stderr
    assert not (work / target).exists()
    written = [p for p in mount_point.rglob("*") if p.is_file()]
    assert written == [], written  # after unmounting: nothing of the job's was left on the real disk either


def test_the_repository_ci_refuses_a_skip_here():
    assert "BENCHCAST_REQUIRE_TMPFS=1" in (REPO / ".ci" / "run").read_text()
