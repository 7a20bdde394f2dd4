"""Methods of other packages in the workflow (issue 40), on the toy "misses the mark" grid: a built-in
method registered again through an entry point of a separately installed package gives, in the
Snakemake job's fresh process, the registry's results bit for bit; the method comparison ranks the
example package's method beside the study's own methods, running only its jobs; an edit of the
package's code reruns exactly its jobs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers import REPO, SNAKEMAKE
from test_workflow import make_workdir

pytestmark = pytest.mark.e2e

EXAMPLE = REPO / "examples" / "benchcast-example-method"
ALIAS_PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "builtin-alias"
version = "1.0"

[project.entry-points."benchcast.methods"]
alias_random_sampling = "benchcast.methods.random_sampling:RandomSampling"
alias_aipw = "benchcast.methods.aipw:AIPW"
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The example package and a package whose entry points are two built-in classes, installed by
    pip into a folder of their own."""
    target = tmp_path_factory.mktemp("site")
    alias = tmp_path_factory.mktemp("alias")
    (alias / "pyproject.toml").write_text(ALIAS_PYPROJECT)
    (alias / "builtin_alias.py").write_text('"""Two built-in methods under other names."""\n')
    example = shutil.copytree(EXAMPLE, tmp_path_factory.mktemp("example") / EXAMPLE.name)
    for source in (example, alias):
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
        done = subprocess.run([*pip, "--target", str(target), str(source)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
    return target


def run(work: Path, site: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    cmd = [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(work), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=work, env=env)
    assert proc.returncode == 0, f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout + proc.stderr


def jobs_of(output: str, rule: str) -> list[str]:
    """The ``{method}`` of every job of ``rule`` in a Snakemake log (run or dry run)."""
    found = re.findall(rf"rule {rule}:\n(?:.*\n)*?\s+wildcards: ([^\n]*)", output)
    return sorted(dict(kv.split("=") for kv in w.split(", "))["method"] for w in found)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, site) -> Path:
    methods = [
        {"name": "random_sampling"},
        {"name": "aipw", "params": {"alpha": 10.0}},
        {"name": "alias_random_sampling"},
        {"name": "alias_aipw", "params": {"alpha": 10.0}},
    ]
    work = make_workdir(tmp_path_factory.mktemp("plugins"), methods=methods)
    run(work, site, "misses_the_mark", "--cores", "2", "--quiet")
    return work


def test_a_built_in_method_through_an_entry_point_gives_the_registrys_results_bit_for_bit(finished):
    runs = finished / "results" / "runs" / "misses_the_mark"
    compared = 0
    for registry_name in ("random_sampling", "aipw"):
        for path in sorted(runs.glob(f"*/*/{registry_name}/n=10.parquet")):
            ours = pd.read_parquet(path)
            theirs = pd.read_parquet(Path(str(path).replace(f"/{registry_name}/", f"/alias_{registry_name}/")))
            pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
            compared += 1
    assert compared == 2 * 2 * 2  # two methods, two datasets, two splits


def test_the_comparison_runs_only_the_new_methods_jobs_and_an_edit_reruns_exactly_them(finished, site, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(finished, work, symlinks=True)
    config = yaml.safe_load((work / "config" / "config.yaml").read_text())
    config["studies"] = ["misses_the_mark", "method_comparison"]
    config["method_comparison"] = {
        "protocols": ["misses_the_mark"],
        "methods": [{"name": "random_sampling"}, {"name": "aipw"}, {"name": "example_random_sampling"}],
    }
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    own_site = shutil.copytree(site, tmp_path / "site")
    output = run(work, own_site, "--cores", "2")
    # the study's own random_sampling and aipw are reused; the package's method runs on the grid
    assert jobs_of(output, "mtm_run") == ["example_random_sampling"] * 4
    ranking = pd.read_csv(work / "results" / "tables" / "method_comparison" / "misses_the_mark.csv")
    assert ranking.method.tolist() == ["random_sampling", "aipw", "example_random_sampling"]
    assert (ranking.trials == 3).all() and (ranking.groups == 4).all()
    assert ranking.set_index("method").loc["aipw", "rank"] < 3  # AIPW's control variate beats plain sampling here
    summary = (work / "results" / "tables" / "method_comparison" / "summary.md").read_text()
    assert "| example_random_sampling |" in summary
    assert "Nothing to be done" in run(work, own_site, "-n")
    module = own_site / "benchcast_example_method" / "__init__.py"
    module.write_text(module.read_text() + "\n# an edit\n")
    dry = run(work, own_site, "-n")
    assert jobs_of(dry, "mtm_run") == ["example_random_sampling"] * 4
    assert "params have changed since last execution" in dry
