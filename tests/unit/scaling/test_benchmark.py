"""The scaling benchmark's driver: cells in capped processes, a resumable table, growth exponents."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchcast.errors import ConfigError
from benchcast.scaling.benchmark import Size, data_file, growth, run, run_cell

REPO = Path(__file__).resolve().parents[3]


def test_size_parse():
    assert Size.parse("1000x10000") == Size(1000, 10000) and str(Size(5, 7)) == "5x7"
    with pytest.raises(ConfigError, match="MODELSxITEMS"):
        Size.parse("1000by10")
    with pytest.raises(ConfigError, match="too small"):
        Size.parse("2x100")


def test_a_cell_measures_the_method_as_the_trial_runner_runs_it(tmp_path):
    data = data_file(Size(60, 400), 0, tmp_path)
    row = run_cell(None, "random_sampling", data, 30, 10, 0, 8.0, 120.0)
    assert row["status"] == "ok", row
    assert row["fit_s"] >= 0 and row["estimate_s"] >= 0 and row["select_s"] >= 0
    assert 0 < row["data_gb"] <= row["peak_gb"] < 8.0
    scores = np.load(data)["scores"].astype(float)
    # Random-Sampling's estimate is the mean of its 30 items: far from the truth only by sampling
    assert 0 < row["mae"] < 0.2 and row["replay_gap"] == 0.0
    assert data_file(Size(60, 400), 0, tmp_path).stat().st_mtime == data.stat().st_mtime  # made once
    assert scores.shape == (60, 400)


def test_caps_stop_a_cell_and_its_larger_sizes(tmp_path):
    out = tmp_path / "scaling.csv"
    log = []
    table = run(
        [Size(40, 300), Size(80, 600)],
        ["random_sampling", "random_search_learn"],
        out,
        budget=20,
        targets=5,
        time_cap_s=4.0,
        data_dir=tmp_path / "data",
        params={"random_search_learn": {"num_search": 10**6}},  # minutes, even at 40 x 300
        log=log.append,
    )
    status = {(r.method, r.models): r.status for r in table.itertuples()}
    assert status == {
        ("random_sampling", 40): "ok",
        ("random_sampling", 80): "ok",
        ("random_search_learn", 40): "time",
        ("random_search_learn", 80): "skipped",
    }
    assert "stopped (time) at 40x300" in table[table.status == "skipped"].error.iloc[0]
    assert pd.read_csv(out)["params"].tolist()[1] == '{"num_search": 1000000}'
    # a rerun keeps every row it has: nothing runs again
    log.clear()
    slow = {"random_search_learn": {"num_search": 10**6}}
    again = run(
        [Size(40, 300), Size(80, 600)], ["random_sampling", "random_search_learn"], out, params=slow, log=log.append
    )
    assert log == [] and len(again) == 4
    # other settings are other cells (the stop under 10**6 candidates does not skip them)
    fast = {"random_search_learn": {"num_search": 100}}
    more = run([Size(40, 300)], ["random_search_learn"], out, params=fast, data_dir=tmp_path / "data", log=log.append)
    assert len(log) == 1 and len(more) == 5 and more.status.iloc[-1] == "ok"
    assert more.params.iloc[-1] == '{"num_search": 100}'


def test_the_memory_cap_stops_an_allocation_not_the_machine(tmp_path):
    data = data_file(Size(6000, 8000), 0, tmp_path)  # 384 MB as float64
    # the imports take about 0.5 GB of address space; the float64 copy does not fit beside them
    row = run_cell(None, "random_sampling", data, 30, 10, 0, 0.7, 60.0)
    assert row["status"] == "memory", row
    assert "0.7 GB cap" in row["error"]


def test_growth_recovers_known_exponents():
    sizes = [(500, 2000), (1000, 2000), (500, 10000), (1000, 10000), (2500, 25000)]
    rows = [
        {"version": "after", "method": "m", "models": m, "items": i, "status": "ok", "fit_s": 1e-11 * m * i**2}
        for m, i in sizes
    ]
    for row in rows:
        row["estimate_s"] = row["fit_s"] / 3  # the exponents of fit plus estimate
    rows.append({"version": "after", "method": "m", "models": 9, "items": 9, "status": "time", "fit_s": np.nan})
    rows += [
        {"version": "after", "method": "two", "models": m, "items": i, "status": "ok", "fit_s": 1.0, "estimate_s": 0}
        for m, i in sizes[:2]
    ]
    g = growth(pd.DataFrame(rows)).set_index("method")
    assert g.loc["m", "sizes"] == 3  # the two sizes of 2,000 items took < 0.1 s: timer noise, left out
    assert g.loc["m", "b_models"] == pytest.approx(1.0) and g.loc["m", "b_items"] == pytest.approx(2.0)
    assert np.isnan(g.loc["two", "b_models"])  # two sizes cannot separate models from items


def test_the_smallest_size_of_every_method_as_a_developer_types_it(tmp_path):
    """The CI smoke test of the benchmark: every registered method at its smallest size."""
    from benchcast.methods import REGISTRY

    out = tmp_path / "s.csv"
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts/performance/benchmark_scaling.py"), "--sizes", "500x2000",
         "--data-dir", str(tmp_path), "--out", str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out)
    assert sorted(table.method) == sorted(REGISTRY) and len(REGISTRY) >= 20
    assert (table.status == "ok").all(), table[table.status != "ok"][["method", "error"]].to_string()
    assert (table.peak_gb < 2.0).all() and (table.mae < 0.2).all()
    assert "b_models" in proc.stdout


def test_versions_run_back_to_back_per_cell(tmp_path):
    """Two checkouts (here this one twice, once through PYTHONPATH) measured on the same cells."""
    out = tmp_path / "paired.csv"
    table = run(
        [Size(30, 200)],
        ["random_sampling", "aipw"],
        out,
        versions={"before": REPO / "src", "after": None},
        budget=10,
        targets=5,
        data_dir=tmp_path,
        log=lambda s: None,
    )
    assert list(zip(table.method, table.version, strict=True)) == [
        ("random_sampling", "before"),
        ("random_sampling", "after"),
        ("aipw", "before"),
        ("aipw", "after"),
    ]
    assert set(table.status) == {"ok"}
    assert table.groupby("method").mae.nunique().eq(1).all()  # the same code: the same estimates


def test_the_peak_is_the_cells_own_not_the_benchmarks(tmp_path):
    """A cell's process starts from the benchmark's (fork, then exec): its peak must not count the
    memory the benchmark held then (``ru_maxrss`` would: Linux keeps it across exec)."""
    data = data_file(Size(60, 400), 0, tmp_path)
    held = np.ones((100_000, 1_000))  # 0.75 GB in the benchmark's process, touched
    row = run_cell(None, "random_sampling", data, 30, 10, 0, 8.0, 120.0)
    assert held.sum() > 0 and row["status"] == "ok"
    assert row["peak_gb"] < 0.5, row


def test_the_whole_leaderboard_settings_run_and_are_recorded_as_a_user_types_them(tmp_path):
    """``--settings whole_leaderboard``: each approximation its method accepts and runs (1,600
    items: above TailoredBench's CLARA threshold), with its settings in the table."""
    from benchcast.scaling.benchmark import WHOLE_LEADERBOARD

    out = tmp_path / "w.csv"
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts/performance/benchmark_scaling.py"), "--sizes", "120x1600",
         "--methods", *WHOLE_LEADERBOARD, "--settings", "whole_leaderboard", "--budget", "40", "--targets", "5",
         "--data-dir", str(tmp_path), "--out", str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out).set_index("method")
    assert (table.status == "ok").all(), table[table.status != "ok"].error.to_string()
    for method, params in WHOLE_LEADERBOARD.items():
        assert json.loads(table.params[method]) == params
    assert (table.mae < 0.2).all()


def test_a_native_crash_is_reported_as_a_signal_with_where_it_happened(tmp_path, monkeypatch):
    """A cell killed by a signal (a segmentation fault in native code) is its own status, naming the
    signal and the innermost Python frame (the cell runs under ``-X faulthandler``), not "memory"."""
    import types

    import benchcast.scaling.benchmark as benchmark

    crashing = tmp_path / "crashing_cell.py"
    crashing.write_text("import ctypes\n\ndef fit():\n    ctypes.string_at(0)\n\nfit()\n")
    monkeypatch.setattr(benchmark, "cell", types.SimpleNamespace(__file__=str(crashing)))
    data = data_file(Size(60, 400), 0, tmp_path)
    row = run_cell(None, "random_sampling", data, 30, 10, 0, 8.0, 120.0)
    assert row["status"] == "signal", row
    assert "SIGSEGV" in row["error"] and "crashing_cell.py" in row["error"] and "fit" in row["error"], row
