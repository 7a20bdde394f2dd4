"""The new-model commands without a clone (issue 37, acceptance 6): the wheel built from this
repository, installed into a fresh virtual environment outside it, gives a working `benchcast`
that fetches MuSR from the mirror into the per-user cache, selects and estimates -- the commands
as a user types them, from a folder that is not the repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pandas as pd
import pytest
from helpers import MIRROR, REPO

from benchcast.data.item_level import load_response_matrix

pytestmark = pytest.mark.e2e


def run(cmd, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    assert proc.returncode == 0, f"{cmd}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh virtual environment holding the wheel (and its pinned dependencies) only."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"  # a copy: building in place would leave build/ in the repository
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", root / "dist", source])
    (wheel,) = (root / "dist").glob("benchcast-*.whl")
    venv = root / "venv"
    run([sys.executable, "-m", "venv", venv])
    run([venv / "bin" / "pip", "install", "--quiet", wheel, "-c", REPO / "requirements.txt"])
    return wheel, venv


def test_the_wheel_carries_the_catalog_and_the_measured_facts(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"benchcast/data/catalog.yaml", "benchcast/new_model/method_facts.json"} <= names
    assert "snakemake_logger_plugin_benchcast/__init__.py" in names


@pytest.mark.skipif(not MIRROR.is_dir(), reason="needs the raw mirror ../shared/raw")
def test_fetch_select_and_estimate_musr_from_the_installed_wheel(installed, tmp_path):
    _, venv = installed
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    env.pop("BENCHCAST_DATA_DIR", None)

    def benchcast(line: str) -> subprocess.CompletedProcess:
        return run(["benchcast", *line.split()], cwd=work, env=env)

    where = run(["python", "-c", "import benchcast; print(benchcast.__file__)"], cwd=work, env=env).stdout
    assert where.startswith(str(venv)), where  # the installed package, not this checkout
    fetched = benchcast(f"fetch musr --raw-dir {MIRROR}")
    data = cache / "benchcast" / "data" / "musr"
    assert f"musr: 448 models x 756 items in {data}" in fetched.stdout, fetched.stdout
    assert "sha256 verified" in fetched.stderr
    again = benchcast(f"fetch musr --raw-dir {MIRROR}")
    assert "already in" in again.stdout
    listed = json.loads(benchcast("datasets --json").stdout)
    assert next(d for d in listed if d["dataset"] == "musr")["ingested"] == "yes"

    benchcast("select musr --method random_sampling --budget 50 --out items.csv")
    assert (cache / "benchcast" / "models" / "musr" / "random_sampling" / "n=50" / "fit.json").is_file()
    items = pd.read_csv(work / "items.csv")
    board = load_response_matrix(data)  # the leaderboard's first model answers
    items["score"] = items.item_id.map(dict(zip(board.item_ids, board.scores[0].astype(int))))
    items.to_csv(work / "items.csv", index=False)
    benchcast("estimate musr --method random_sampling --answers items.csv --out estimate.json")
    result = json.loads((work / "estimate.json").read_text())
    assert result["items_used"] == 50 and result["lower"] <= result["estimate"] <= result["upper"]
    assert np.isclose(result["estimate"], items.score.mean())  # Random-Sampling: the mean of its items
