"""The tests' shared fixtures: simulated data (simdata.py) and the workflow runner (helpers.py),
importable from every folder of the suite.

Layout: ``unit/<package>/`` tests one library package with data the tests generate;
``studies/<study>/`` one study's library side; ``workflow/`` runs Snakemake end to end (marked
``e2e``; the SLURM end-to-end test ``slurm``, run by ``.ci/run`` with ``-m slurm``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers, simdata: one copy for every folder

import helpers
import simdata


@pytest.fixture
def repo() -> Path:
    """The repository root."""
    return helpers.REPO


@pytest.fixture
def mirror() -> Path:
    """The real raw mirror beside the repository (the test is skipped without it)."""
    if not helpers.MIRROR.is_dir():
        pytest.skip("needs the raw mirror ../shared/raw beside the repository")
    return helpers.MIRROR


@pytest.fixture(scope="session", autouse=True)
def private_user_cache(tmp_path_factory):
    """The command line's per-user cache (its default data folder outside a clone) in a folder of
    the test run's own, for the tests and the processes they start: never the user's."""
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("user-cache"))
    os.environ.pop("BENCHCAST_DATA_DIR", None)


@pytest.fixture
def irt_data() -> simdata.SimulatedResponses:
    """60 models x 200 items of a 2-dimensional 2PL model (seed 0)."""
    return simdata.irt_responses(60, 200, seed=0, dims=2, disc=(1.0, 0.3))


@pytest.fixture
def logistic_data():
    """Binary scores of 80 models x 120 items from a 1-D Rasch model (seed 0)."""
    return simdata.logistic_scores(80, 120, seed=0)


@pytest.fixture
def run_snakemake():
    """``run_snakemake(workdir, *args)``: the repository's Snakefile in a work folder."""
    return helpers.snakemake
