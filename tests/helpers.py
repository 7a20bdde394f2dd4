"""What the tests share besides the simulated data (simdata.py): where the repository and the raw
mirror are, a fast setting of each slow method, and the workflow runner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: the repository root
REPO = Path(__file__).resolve().parents[1]
#: the real raw mirror beside the repository (tests that need it skip without it)
MIRROR = REPO.parent / "shared" / "raw"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]

#: the slow methods' settings for tests that run every method
FAST = {
    "random_search_learn": {"num_search": 20},
    "lasso": {"n_alphas": 80},
    "pca": {"k_grid": [2, 5]},
    "tailoredbench": {"g_size": 3},
}


def snakemake(workdir: Path, *args: str, check=True) -> subprocess.CompletedProcess:
    """The repository's Snakefile run in a work folder; its output in the assertion on failure."""
    cmd = [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc
