"""The SLURM path end to end: the quick default config through a real single-node SLURM cluster
on this machine (scripts/slurm/local-cluster.sh) with ``--workflow-profile workflow/profiles/slurm``.
It builds the target rules of four of the default run's five studies (:data:`TARGETS`: every study
with job groups, about 60 jobs); "misses the mark" (68 jobs of ordinary rules, no groups) is left to
the local run, as the whole default run through SLURM would add minutes to CI for no other path.

Every job that runs a script must have gone through ``sbatch`` (its SLURM job id in Snakemake's
log, its SLURM log file written, exit status 0 in the controller's log), and every output must be
byte-identical to a local-executor run of the same config and code (timing files excepted: they
hold wall-clock seconds; a table with measured-seconds columns is compared without them,
``scripts/results_digest.py``). The cluster is taken down afterwards, also when the run fails.

Marked ``slurm`` and not part of the default test run (it takes minutes and needs root or an
installed SLURM): ``python -m pytest tests -m slurm -rs``. Where the machine cannot run SLURM the
test is skipped with the reason; with ``BENCHCAST_REQUIRE_SLURM=1`` (CI) that is a failure instead.
``BENCHCAST_SLURM_BASELINE=DIR`` reuses DIR/results of a finished local default run (CI: the
README's default run) instead of making one.
"""

from __future__ import annotations

import filecmp
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import REPO, SNAKEMAKE

from benchcast.workflow.dag import TARGET_RULES

CLUSTER = REPO / "scripts" / "slurm" / "local-cluster.sh"
RAW_DIR = (REPO.parent / "shared" / "raw").resolve()
#: what the copies of the repository leave out: outputs, caches and environments
NOT_COPIED = {
    ".git",
    ".venv",
    ".venv-pyirt",
    "results",
    ".snakemake",
    "logs",
    "benchmarks",
    "__pycache__",
    ".pytest_cache",
}

pytestmark = pytest.mark.slurm
#: the default config's studies this test builds through SLURM (each a target rule)
TARGETS = ("benchpress", "tailoredbench", "mdad", "cf_tasks")

_digest_spec = importlib.util.spec_from_file_location("results_digest", REPO / "scripts" / "results_digest.py")
results_digest = importlib.util.module_from_spec(_digest_spec)
_digest_spec.loader.exec_module(results_digest)


def skip_or_fail(reason: str) -> None:
    if os.environ.get("BENCHCAST_REQUIRE_SLURM") == "1":
        pytest.fail(f"BENCHCAST_REQUIRE_SLURM=1 but {reason}")
    pytest.skip(reason)


def why_slurm_cannot_run() -> str | None:
    if not sys.platform.startswith("linux"):
        return f"SLURM's daemons run on Linux only (this is {sys.platform})"
    installed = all(shutil.which(c) for c in ("slurmctld", "slurmd", "munged", "sbatch"))
    if not installed and os.geteuid() != 0:
        return "SLURM is not installed and installing it (apt-get install slurm-wlm munge) needs root"
    if not installed and not shutil.which("apt-get"):
        return "SLURM is not installed and there is no apt-get to install it"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "the executor plugin is missing: pip install snakemake-executor-plugin-slurm==2.8.0"
    if not RAW_DIR.is_dir():
        return f"the raw mirror {RAW_DIR} is missing (the default config runs on it)"
    return None


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A running local cluster (its environment for client commands); down again afterwards."""
    reason = why_slurm_cannot_run()
    if reason:
        skip_or_fail(reason)
    state = tmp_path_factory.mktemp("slurm-state")
    env = {**os.environ, "BENCHCAST_SLURM_DIR": str(state), "SLURM_CONF": str(state / "slurm.conf")}
    up = subprocess.run(["bash", str(CLUSTER), "up"], env=env, capture_output=True, text=True)
    try:
        if up.returncode != 0:
            skip_or_fail(f"the local SLURM cluster did not come up: {(up.stdout + up.stderr).strip()[-600:]}")
        yield env
    finally:
        down = subprocess.run(["bash", str(CLUSTER), "down"], env=env, capture_output=True, text=True)
        assert down.returncode == 0, down.stderr
        assert not list(state.glob("*.pid")), "a daemon's pid file is left: the cluster is not down"


def copy_of_repository(dest: Path) -> Path:
    shutil.copytree(REPO, dest, ignore=lambda _dir, names: [n for n in names if n in NOT_COPIED])
    return dest


def run_default_config(workdir: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    # the copy's own library, whatever the venv's editable install points at
    env = {**env, "PYTHONPATH": str(workdir / "src")}
    cmd = [*SNAKEMAKE, "--config", f"raw_dir={RAW_DIR}", *args]
    return subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True)


def result_files(root: Path) -> set[str]:
    """Every output under results/, except the files of measured seconds."""
    results = root / "results"
    return {
        str(p.relative_to(results))
        for p in results.rglob("*")
        if p.is_file() and not results_digest.is_timing(p.relative_to(results))
    }


@pytest.fixture(scope="module")
def local_baseline(tmp_path_factory) -> Path:
    given = os.environ.get("BENCHCAST_SLURM_BASELINE")
    if given:
        return Path(given)
    workdir = copy_of_repository(tmp_path_factory.mktemp("local") / "repo")
    proc = run_default_config(workdir, dict(os.environ), "--cores", "all", *TARGETS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return workdir


def run_cancelling_one_job(workdir: Path, env: dict, *args: str) -> tuple[int, str, str, str]:
    """:func:`run_default_config`, and while it runs, ``scancel`` of the first of its group jobs that
    SLURM is seen running (a job killed under it, as an administrator, a preemption or a node's loss
    does): a thread polls ``squeue`` while the output is read, so a group job that finishes before it
    is seen running is simply not the one. Its return code, its output, the SLURM job id that was
    cancelled and Snakemake's id of that job."""
    env = {**env, "PYTHONPATH": str(workdir / "src")}
    cmd = [*SNAKEMAKE, "--config", f"raw_dir={RAW_DIR}", *args]
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    groups: dict[str, str] = {}  # SLURM job id -> Snakemake's key, for group jobs (several jobs: minutes)
    done = {"slurm_id": "", "key": ""}

    def cancel_one_running() -> None:
        while proc.poll() is None and not done["slurm_id"]:
            state = subprocess.run(["squeue", "-h", "-o", "%i %T"], env=env, capture_output=True, text=True)
            running = [i for i, t in (ln.split() for ln in state.stdout.splitlines() if ln.strip()) if t == "RUNNING"]
            for slurm_id in running:
                if slurm_id in groups:
                    subprocess.run(["scancel", slurm_id], env=env, check=True)
                    done.update(slurm_id=slurm_id, key=groups[slurm_id])
                    return
            time.sleep(0.2)

    watcher = threading.Thread(target=cancel_one_running, daemon=True)
    watcher.start()
    lines = []
    for line in proc.stdout:
        lines.append(line)
        submitted = re.search(r"Job ([\w-]+) has been submitted with SLURM jobid (\d+)", line)
        if submitted and not submitted[1].isdigit():
            groups[submitted[2]] = submitted[1]
    code = proc.wait()
    watcher.join(timeout=10)
    return code, "".join(lines), done["slurm_id"], done["key"]


def test_default_config_through_slurm_matches_the_local_run(cluster, local_baseline, tmp_path):
    """With one job cancelled under the run: the profile's retry resubmits it and the outputs are
    still the local run's, byte for byte."""
    workdir = copy_of_repository(tmp_path / "repo")
    returncode, log, cancelled, key = run_cancelling_one_job(
        workdir,
        cluster,
        "--workflow-profile",
        "workflow/profiles/slurm",
        "--slurm-no-account",
        "--slurm-keep-successful-logs",
        # the plugin's first status check of a submission after 40 s (then 10 s more each time none
        # finished) suits a shared cluster; on this one-node cluster the run's stages would wait on it
        "--slurm-init-seconds-before-status-checks",
        "3",
        *TARGETS,
    )
    assert returncode == 0, log[-4000:]
    assert cancelled, "no group job was seen running: nothing was cancelled"
    assert f"Trying to restart job {key}." in log, log[-4000:]
    again = re.findall(rf"Job {key} has been submitted with SLURM jobid (\d+)", log)
    assert len(again) == 2 and again[0] == cancelled, again  # resubmitted once, under a new SLURM id

    finished = dict(re.findall(r"Finished jobid: (\d+) \(Rule: (\w+)\)", log))
    script_jobs = {job for job, rule in finished.items() if rule not in TARGET_RULES}
    assert len(script_jobs) > 50, f"only {len(script_jobs)} jobs ran: not the default config's {', '.join(TARGETS)}"
    assert {rule for rule in finished.values()} >= set(TARGETS), "a study's target rule did not finish"
    submitted = dict(re.findall(r"Job ([\w-]+) has been submitted with SLURM jobid (\d+)", log))
    # a group job (the rules' group:, one submission) is submitted under a uuid; its jobs are the
    # indented jobids under its "Group job" header
    # (printed again when a group job is restarted: the cancelled one is)
    group_headers = re.findall(r"Group job \S+ \(jobs in lexicogr\. order\):", log)
    group_restarts = [k for k in re.findall(r"Trying to restart job ([\w-]+)\.", log) if not k.isdigit()]
    in_groups = set(re.findall(r"^ {8}jobid: (\d+)$", log, flags=re.M))
    single = {job for job in submitted if job.isdigit()}
    assert len(submitted) - len(single) == len(group_headers) - len(group_restarts) > 0, "a group job, one submission"
    assert script_jobs == single | in_groups, (
        f"jobs that did not go through sbatch: {sorted((j, finished[j]) for j in script_jobs - single - in_groups)}"
    )
    assert len(submitted) < len(script_jobs), "the job groups bundle jobs into fewer submissions"
    slurm_logs = {p.stem for p in (workdir / ".snakemake" / "slurm_logs").rglob("*.log")}
    assert set(submitted.values()) <= slurm_logs
    # squeue forgets finished jobs after MinJobAge; the controller's log keeps every exit status
    controller_log = (Path(cluster["BENCHCAST_SLURM_DIR"]) / "log" / "slurmctld.log").read_text()
    exit_status = dict(re.findall(r"_job_complete: JobId=(\d+) WEXITSTATUS (\d+)", controller_log))
    assert {exit_status.get(i) for i in submitted.values()} == {"0"}, "a SLURM job did not finish with status 0"
    assert cancelled not in submitted.values(), "the cancelled job's outputs came from a resubmission"

    ours, local = result_files(workdir), result_files(local_baseline)
    assert not ours - local, f"outputs the local run did not make: {sorted(ours - local)[:5]}"
    # a reused baseline (CI's clone) may hold more: the README's other commands write there too
    if not os.environ.get("BENCHCAST_SLURM_BASELINE"):
        assert not local - ours, f"outputs the SLURM run did not make: {sorted(local - ours)[:5]}"
    # CSV and Parquet files by their digest without measured-seconds columns (the CF study's per-repeat
    # metrics and Tables 3 and 5 hold seconds beside its numbers), every other file byte for byte
    tables = sorted(f for f in ours if Path(f).suffix in results_digest.SUFFIXES)
    mismatch = [
        f
        for f in tables
        if results_digest.digest(workdir / "results" / f) != results_digest.digest(local_baseline / "results" / f)
    ]
    _, other, errors = filecmp.cmpfiles(
        workdir / "results", local_baseline / "results", sorted(set(ours) - set(tables)), shallow=False
    )
    mismatch += other
    assert not mismatch and not errors, f"{len(mismatch)} outputs differ from the local run's, e.g. {mismatch[:5]}"
    # and as an evaluator checks it: the four studies reproduce the tour's expected outputs; the run
    # is partial ("misses the mark" and the index were left to the local run), so exit 3, no mismatch
    env = {**cluster, "PYTHONPATH": str(workdir / "src")}
    cmd = [sys.executable, "-m", "benchcast", "verify", "results", "--against", "tour"]
    verified = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True)
    assert verified.returncode == 3, verified.stdout + verified.stderr
    for study in TARGETS:
        assert f"PASS    {study}: " in verified.stdout, verified.stdout


def test_a_job_that_fails_under_slurm_fails_the_run_with_its_one_line_error(cluster, tmp_path):
    """A real failure (a raw file with a score of 0.5) through SLURM: the run fails, and Snakemake's
    output carries the job's one-line error from its log (the profile's ``show-failed-logs``), not
    only "check log file(s)"."""
    import joblib
    from test_workflow import make_workdir

    work = make_workdir(tmp_path / "bad")
    raw = work / "raw/benchmark-prediction/data/scores/toy_a.jbl"
    scores = joblib.load(raw)
    scores[2, 5] = 0.5
    joblib.dump(scores, raw)
    cmd = [
        *SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(work),
        "--workflow-profile", str(REPO / "workflow" / "profiles" / "slurm"), "--slurm-no-account",
        "--slurm-init-seconds-before-status-checks", "3",
        "--retries", "0", "results/data/toy_a/responses.parquet",  # a retry would fail the same way
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=work, env=cluster, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "has been submitted with SLURM jobid" in out, out[-3000:]
    errors = [line for line in out.splitlines() if "ERROR in rule ingest_item_dataset: " in line]
    assert errors and all("toy_a" in e and "field '" in e and "Fix:" in e for e in errors), out[-3000:]
    assert not (work / "results/data/toy_a/responses.parquet").exists()
