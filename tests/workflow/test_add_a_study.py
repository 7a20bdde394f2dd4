"""Adding a study is its own folders plus one config file: the minimal study of
docs/examples/minimal_study, copied into a copy of the repository, runs alone and inside
config/all_papers.yaml, and shows in results/index.md, the report and the SLURM job groups -- with
no file of the repository edited."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import MIRROR, REPO

from benchcast.workflow.dag import parse_dry_run

pytestmark = pytest.mark.e2e

EXAMPLE = REPO / "docs" / "examples" / "minimal_study"


def repository_files() -> list[str]:
    proc = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return [f for f in proc.stdout.splitlines() if (REPO / f).is_file()]


def digests(root: Path, files: list[str]) -> dict[str, str]:
    return {f: hashlib.sha256((root / f).read_bytes()).hexdigest() for f in files}


@pytest.fixture(scope="module")
def copy_with_toy(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A copy of the repository with the minimal study's files added (none replaced)."""
    root = tmp_path_factory.mktemp("repo")
    files = repository_files()
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, root / f)
    before = digests(root, files)
    for path in sorted(EXAMPLE.rglob("*")):
        rel = path.relative_to(EXAMPLE)
        if path.is_file() and rel.name != "README.md":
            assert not (root / rel).exists(), f"the example would replace {rel}"
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, root / rel)
    return root, before


def snakemake(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root / "src")}  # the copy's benchcast, with its new study
    cmd = [sys.executable, "-m", "snakemake", *args, "--config", f"raw_dir={MIRROR}"]
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return proc


@pytest.mark.skipif(not MIRROR.is_dir(), reason="needs the raw mirror ../shared/raw beside the repository")
def test_a_new_study_runs_and_shows_in_the_index_the_report_and_the_slurm_groups(copy_with_toy):
    root, before = copy_with_toy
    snakemake(root, "--cores", "2", "--configfile", "config/toy.yaml")
    table = (root / "results" / "tables" / "toy" / "paper_vs_ours.csv").read_text()
    assert table.splitlines()[0] == "run,ours,paper,within_tolerance" and len(table.splitlines()) == 4
    index = (root / "results" / "index.md").read_text()
    assert "## toy" in index and "A minimal study: accuracy from the first n items" in index
    assert "Mean absolute error per budget" in index

    snakemake(root, "--configfile", "config/toy.yaml", "--report", "results/report.html")
    report = (root / "results" / "report.html").read_text(errors="replace")
    assert "paper_vs_ours.csv" in report and "Toy" in report

    # SLURM: the profile bundles the study's run jobs two per submission (its job_groups)
    dry = snakemake(
        root,
        "-n",
        "--forceall",
        "--workflow-profile",
        "workflow/profiles/slurm",
        "--slurm-no-account",
        "--configfile",
        "config/toy.yaml",
    )
    runs = [job for job in parse_dry_run(dry.stdout + dry.stderr) if job.rule == "toy_run"]
    assert len(runs) == 3 and sorted(sum(job.group == g for job in runs) for g in {j.group for j in runs}) == [1, 2]

    # the artifact run includes it: its config file and its outputs, beside every paper's
    dry = snakemake(root, "-n", "--forceall", "--configfile", "config/all_papers.yaml")
    stats = dry.stdout[dry.stdout.index("Job stats:") :]
    for rule in ("toy_run", "toy_table", "mtm_run", "bp_grid", "tb_run", "mdad_run", "cf_run", "index"):
        assert f"\n{rule} " in stats, rule

    assert digests(root, list(before)) == before, "a file of the repository was edited"


#: the tests every study must pass (they read the registry, never a list of studies): the layout and
#: selections, the config check of its methods, the package layers, the SLURM bundles
CONTRACT_TESTS = (
    "tests/workflow/test_study_layout.py",
    "tests/unit/workflow/test_config_check.py",
    "tests/unit/test_structure.py",
    "tests/workflow/test_slurm_groups.py::test_every_study_bundles_its_run_jobs_on_slurm",
)


@pytest.mark.skipif(not MIRROR.is_dir(), reason="needs the raw mirror ../shared/raw beside the repository")
def test_the_shared_contract_tests_pass_in_the_copy_with_the_new_study(copy_with_toy):
    """The suite's shared study tests, run in the copy (its benchcast, its new study): they pass with
    no file of the repository edited. The per-study dry runs of the eight other studies, and the
    all-papers plan counts, are the main suite's; here the new study's and all studies' together."""
    root, before = copy_with_toy
    shared = root.parent / "shared"  # the copy's ../shared/raw is the real mirror
    if not shared.exists():
        shared.symlink_to(MIRROR.parent, target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    selection = "toy or not (every_target_of_every_selection or all_papers_is_every_study)"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *CONTRACT_TESTS, "-q", "-p", "no:cacheprovider", "-rs", "-k", selection],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    # the new study took part: its own layout case and its selection's dry run ran; the one skip is
    # the config check's of the toy study, which lists no methods
    skips = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 1 and "study toy lists no methods" in skips[0], out[-3000:]
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", *CONTRACT_TESTS, "--collect-only", "-q", "-k", selection],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    assert "test_a_study_is_one_unit_per_layer[toy]" in listed and "dry_runs[toy]" in listed
    assert digests(root, list(before)) == before, "a file of the repository was edited"
