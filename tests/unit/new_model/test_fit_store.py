"""The fit store under faults (issue 39): several processes that need one cold fit build it once
(a file lock) and agree; a stored fit that does not match the checksums it was written with --
truncated, edited, or half of another build -- is never used: it is rebuilt, with one line saying so.
Run as a user types the commands (processes), on a leaderboard the test writes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from benchcast.errors import DataError
from benchcast.methods.state import CorruptFit, read_state, write_state

PROCESSES = 8


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A 120 x 400 leaderboard of a Rasch model: a TailoredBench fit on it takes about a second,
    longer than the eight processes take to start, so that they overlap."""
    root = tmp_path_factory.mktemp("store")
    rng = np.random.default_rng(0)
    ability, difficulty = rng.normal(size=120), rng.normal(size=400)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    frame = pd.DataFrame((rng.random(p.shape) < p).astype(int), columns=[f"q{j}" for j in range(400)])
    frame.insert(0, "model_id", [f"m{i}" for i in range(120)])
    frame.to_csv(root / "board.csv", index=False)
    return root / "board.csv"


def benchcast(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchcast", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def at_once(commands: list[tuple], cwd) -> list[subprocess.CompletedProcess]:
    with ThreadPoolExecutor(len(commands)) as pool:
        return list(pool.map(lambda args: benchcast(*args, cwd=cwd), commands))


ARGS = ("--method", "tailoredbench", "--budget", 30, "--data-dir", "data", "--cores", 1)


def builds(runs) -> int:
    return sum("building the tailoredbench fit" in r.stderr for r in runs)


def test_eight_processes_on_one_cold_fit_build_it_once_and_agree(board, tmp_path):
    runs = at_once([("select", board, *ARGS, "--out", f"sel{i}.csv") for i in range(PROCESSES)], tmp_path)
    assert all(r.returncode == 0 and "Traceback" not in r.stderr for r in runs), [r.stderr for r in runs]
    assert builds(runs) == 1, [r.stderr for r in runs]
    selections = {(tmp_path / f"sel{i}.csv").read_bytes() for i in range(PROCESSES)}
    assert len(selections) == 1
    (folder,) = (tmp_path / "data" / "models").glob("*/tailoredbench/n=30")
    read_state(folder)  # whole: every checksum matches
    assert sorted(p.name for p in folder.iterdir()) == [
        ".build.lock",
        "arrays.parquet",
        "calibration.parquet",
        "fit.json",
        "pairs.parquet",
    ]

    # the same for estimate, on the fit made cold again (the leaderboard's stored bits kept); the
    # answers of every round first (TailoredBench asks in rounds), made with the fit built above
    fit_bytes = {p.name: p.read_bytes() for p in folder.iterdir()}
    rounds = answer_every_round(board, tmp_path)
    shutil.rmtree(folder)
    estimate = ("estimate", board, *ARGS, "--answers", *rounds)
    runs = at_once([(*estimate, "--out", f"e{i}.json") for i in range(PROCESSES)], tmp_path)
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    assert builds(runs) == 1, [r.stderr for r in runs]
    assert len({(tmp_path / f"e{i}.json").read_bytes() for i in range(PROCESSES)}) == 1
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == fit_bytes  # the same fit, byte for byte


def answer_every_round(board, work) -> list[str]:
    """Select round after round, each item answered 1 when its number is even, until complete."""
    rounds: list[str] = []
    while True:
        out = f"round{len(rounds)}.csv"
        given = ("--answers", *rounds) if rounds else ()
        run = benchcast("select", board, *ARGS, *given, "--out", out, cwd=work)
        assert run.returncode == 0, run.stderr
        batch = pd.read_csv(work / out)
        if batch.empty:
            return rounds
        batch.assign(score=batch["item_id"].str[1:].astype(int) % 2 == 0).astype({"score": int}).to_csv(
            work / out, index=False
        )
        rounds.append(out)


def _damage(folder, name: str, how: str) -> None:
    path = folder / name
    if how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "byte flipped":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x01
        path.write_bytes(bytes(data))
    elif how == "removed":
        path.unlink()
    elif how == "edited":  # a plausible edit of the JSON: still valid, another budget
        doc = json.loads(path.read_text())
        doc["meta"]["budget"] += 1
        path.write_text(json.dumps(doc))


DAMAGE = [
    ("fit.json", "truncated"),
    ("fit.json", "edited"),
    ("arrays.parquet", "truncated"),
    ("arrays.parquet", "byte flipped"),
    ("calibration.parquet", "byte flipped"),
    ("calibration.parquet", "removed"),
]


@pytest.mark.parametrize(("name", "how"), DAMAGE)
def test_a_damaged_fit_is_rebuilt_with_one_line_never_used(board, tmp_path, name, how):
    first = benchcast("select", board, *ARGS, "--out", "first.csv", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (folder,) = (tmp_path / "data" / "models").glob("*/tailoredbench/n=30")
    whole = {p.name: p.read_bytes() for p in folder.iterdir()}
    _damage(folder, name, how)
    with pytest.raises(CorruptFit):
        read_state(folder)
    again = benchcast("select", board, *ARGS, "--out", "again.csv", cwd=tmp_path)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    said = [line for line in again.stderr.splitlines() if "rebuilding the fit" in line]
    assert len(said) == 1 and name in said[0], again.stderr
    assert builds([again]) == 1
    assert (tmp_path / "again.csv").read_bytes() == (tmp_path / "first.csv").read_bytes()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == whole  # rebuilt to the same bytes


def test_half_of_one_fit_and_half_of_another_is_refused(tmp_path):
    """What a reader would see between two writers' renames: one fit's ``fit.json`` beside
    another's arrays."""
    write_state({"a": np.arange(3.0)}, {"n": 1}, tmp_path / "one")
    write_state({"a": np.arange(4.0)}, {"n": 2}, tmp_path / "two")
    shutil.copy(tmp_path / "two" / "arrays.parquet", tmp_path / "one" / "arrays.parquet")
    with pytest.raises(CorruptFit, match="arrays.parquet.*does not match the sha256"):
        read_state(tmp_path / "one")
    assert issubclass(CorruptFit, DataError)
