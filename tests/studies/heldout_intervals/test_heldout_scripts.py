"""The held-out test's developer scripts, run as a developer types them on a small run's files:
``scripts/dev/heldout_tables.py`` gives the tables job's ``paired.csv`` and ``auto.csv``;
``scripts/dev/paired_calibrations.py`` remakes compare's own intervals (the run's coverage) and others."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from simdata import irt_responses

from benchcast.new_model.leaderboard import load_leaderboard
from benchcast.studies.heldout_intervals.auto import auto_table
from benchcast.studies.heldout_intervals.heldout import heldout
from benchcast.studies.heldout_intervals.pairs import PAIR_COLUMNS, paired_table, summarise_pairs

REPO = Path(__file__).resolve().parents[3]
METHODS = ("random_sampling", "random_sampling_learn")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A held-out run's files for two methods of one small board, as the hi_test job writes them."""
    root = tmp_path_factory.mktemp("heldout_run")
    board = pd.DataFrame(irt_responses(48, 120, seed=5).scores.astype(int), columns=[f"q{j}" for j in range(120)])
    board.insert(0, "model_id", [f"m{i}" for i in range(48)])
    board.to_csv(root / "board.csv", index=False)
    board = load_leaderboard(str(root / "board.csv"))
    made = {}
    for method in METHODS:
        pairs, calibration_pairs, calibration = [], [], []
        rows = heldout(
            board, method, None, 20, 0, 4, 3, 0.9, log=lambda s: None, pairs_out=pairs,
            calibration_pairs_out=calibration_pairs, calibration_out=calibration,
        )  # fmt: skip
        folder = root / "results" / "runs" / "heldout_intervals" / "toy" / method
        folder.mkdir(parents=True)
        frames = {
            "": rows,
            ".pairs": pd.DataFrame(pairs, columns=PAIR_COLUMNS),
            ".calibration_pairs": pd.concat(calibration_pairs, ignore_index=True),
            ".calibration": pd.concat(calibration, ignore_index=True),
        }
        for suffix, frame in frames.items():
            frame.to_parquet(folder / f"n=20{suffix}.parquet")
        made[method] = frames
    return root, made


def script(name, *argv, cwd):
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "dev" / name), *argv], cwd=cwd, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_heldout_tables_are_the_tables_jobs(run):
    root, made = run
    said = script("heldout_tables.py", "results", "--seed", "3", "--out", "tables", cwd=root)
    assert "2 cells" in said
    cells = [("toy", m, 20) for m in METHODS]
    paired = paired_table(cells, [made[m][".pairs"] for m in METHODS])
    pd.testing.assert_frame_equal(
        pd.read_csv(root / "tables" / "paired.csv"), paired, check_exact=False, rtol=0, atol=5.1e-5
    )
    auto = auto_table(
        cells, [made[m][""] for m in METHODS], seed=3, calibrations=[made[m][".calibration"] for m in METHODS]
    )
    written = pd.read_csv(root / "tables" / "auto.csv", dtype={"tied": str})
    assert written.tied.tolist() == auto.tied.tolist() and len(written.tied[0].split(", ")) == 3
    assert written.auto_over_best.tolist() == pytest.approx(auto.auto_over_best.tolist(), abs=5.1e-5)


def test_paired_calibrations_remake_compares_intervals_and_others(run):
    root, made = run
    said = script("paired_calibrations.py", "results", "--out", "calibrations.csv", cwd=root)
    table = pd.read_csv(root / "calibrations.csv")
    assert set(table.method) == {"random_sampling_learn"}  # Random-Sampling has an interval of its own
    assert set(table.calibration) == {"compare", "differing", "truth_5x20", "truth_3x50", "one"}
    pairs = made["random_sampling_learn"][".pairs"]
    own = table[(table.calibration == "compare") & (table.pairs_kind == "all")].iloc[0]
    assert own.coverage == pytest.approx(summarise_pairs(pairs)["conformal_coverage"], abs=1e-4)
    nearest = table[(table.calibration == "compare") & (table.pairs_kind == "nearest")].iloc[0]
    assert nearest.pairs == pairs.nearest.sum()
    assert "compare     all" in said and "within 85-95%" in said
