"""The scaling benchmark: every item-level method's cost as the leaderboard grows.

For each size (models x items, smallest first) and each method, one new process
(:mod:`benchcast.scaling.cell`) fits the method on a synthetic leaderboard
(:mod:`benchcast.scaling.synthetic`), estimates its last ``targets`` models, and replays one of
them as the new-model commands do. Each process has one BLAS thread (as the workflow's jobs and
the command line's fits), a memory cap (its address space) and a time cap (it is killed); a
method stopped by a cap is recorded as stopping there, and is not tried at the larger sizes.

``versions`` names the checkouts to measure (a label and its ``src`` folder; None: this one); every
cell runs them back to back, in the order given, so that the rows of one cell are paired on the
same machine state (a baseline ``before`` and this checkout's ``after``, say).
The table is rewritten (atomically) after every cell, and a rerun with the same output keeps the
rows it already has, so an interrupted benchmark resumes where it stopped.
"""

from __future__ import annotations

import json
import os
import signal
import site
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.blas import THREAD_VARIABLES
from benchcast.data.io import write_text_atomic
from benchcast.errors import ConfigError
from benchcast.scaling import cell
from benchcast.scaling.synthetic import leaderboard

#: the sizes of issue 38's table, and the corners that separate growth in models from growth in items
DEFAULT_SIZES = ("500x2000", "1000x2000", "500x10000", "1000x10000", "2500x25000", "5000x25000", "5000x50000")
#: the papers' settings where the defaults differ (Random-Search-Learn's 10,000 candidates is its default)
DEFAULT_PARAMS: dict[str, dict] = {}
#: settings for whole leaderboards: approximations a user opts into (``--params`` of the new-model
#: commands, a study's method params), each with its measured effect in docs/scaling.md; every
#: method not named keeps its defaults
WHOLE_LEADERBOARD: dict[str, dict] = {
    # CLARA for the N-set above 1,500 items: the released code's sampling (750 items, 10 draws)
    # and at most 200 native sources per target (the adaptive count is half of thousands of sources)
    "tailoredbench": {"clara": {"min_items": 1500, "sample": 750, "iterations": 10}, "native_max": 200},
    # the CF probe's initial models: a random 500 of the sources (item similarities and transport
    # costs are measured over them at every estimate)
    "cf_probe": {"initial_max": 500},
    # the IRT fit's models x items passes in float32 (parameters and sums in float64)
    "p_irt": {"irt": {"dtype": "float32"}},
    "gp_irt": {"irt": {"dtype": "float32"}},
    "tinybenchmarks": {"irt": {"dtype": "float32"}},
    # one k-means start instead of scikit-learn's ten
    "clustering": {"n_init": 1},
    # two components without the cross-validation over k: what the released code of "misses the
    # mark" ran (its CV masked a copy, so k = 2 always; the grid's pca_k2); the targets folded into
    # the source models' components instead of imputed with them
    "pca": {"k_grid": [2], "fold_in": True},
    # the regularisation path stops at 2 x the budget's non-zero weights (its smallest alphas cost the most)
    "lasso": {"stop_ratio": 2},
}
#: the settings ``--settings`` names
SETTINGS: dict[str, dict[str, dict]] = {"default": DEFAULT_PARAMS, "whole_leaderboard": WHOLE_LEADERBOARD}
COLUMNS = [
    "version", "method", "models", "items", "status", "fit_s", "estimate_s", "select_s", "estimate_one_s",
    "data_gb", "fit_peak_gb", "peak_gb", "mae", "replay_gap", "wall_s", "params", "blas_threads", "error",
]  # fmt: skip
#: a cell stopped by a cap, or killed by a signal (a native fault: a segmentation fault, an abort)
STOPPED = ("time", "memory", "signal")


@dataclass(frozen=True)
class Size:
    models: int
    items: int

    @classmethod
    def parse(cls, text: str) -> Size:
        try:
            models, items = (int(part) for part in text.lower().split("x"))
        except ValueError:
            raise ConfigError(f"size {text!r} is not MODELSxITEMS; fix: write it like 1000x10000") from None
        if models < 3 or items < 3:
            raise ConfigError(f"size {text!r} is too small; fix: use at least 3 models and 3 items")
        return cls(models, items)

    def __str__(self) -> str:
        return f"{self.models}x{self.items}"


def data_file(size: Size, seed: int, folder: Path) -> Path:
    """The synthetic leaderboard of ``size`` as an ``.npz`` (made once, then reused)."""
    path = folder / f"synthetic-{size}-seed{seed}.npz"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        board = leaderboard(size.models, size.items, seed)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
        np.savez(tmp, scores=board.scores, subtasks=board.subtasks)
        tmp.replace(path)
    return path


def run_cell(
    src: Path | None,
    method: str,
    data: Path,
    budget: int,
    targets: int,
    seed: int,
    memory_cap_gb: float,
    time_cap_s: float,
    params: dict | None = None,
    blas_threads: str = "1",
) -> dict:
    """One cell in a new process whose ``benchcast`` is ``src`` (None: this one), with one BLAS
    thread (the workflow's and the command line's) or, ``blas_threads="default"``, the BLAS's own
    count (the Python API's: OpenBLAS starts one per core), or that many."""
    with tempfile.TemporaryDirectory(prefix="benchcast-scaling-") as work:
        spec = {
            "data": str(data), "method": method, "params": params, "budget": budget, "targets": targets,
            "seed": seed, "memory_cap_gb": memory_cap_gb, "out": str(Path(work) / "result.json"),
        }  # fmt: skip
        (Path(work) / "spec.json").write_text(json.dumps(spec))
        env = dict(os.environ)
        for name in (*THREAD_VARIABLES, "NUMBA_NUM_THREADS"):
            env.pop(name, None)
        if blas_threads != "default":
            env.update({name: str(int(blas_threads)) for name in (*THREAD_VARIABLES, "NUMBA_NUM_THREADS")})
        if src is not None:
            env["PYTHONPATH"] = str(src)
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-X", "faulthandler", cell.__file__, str(Path(work) / "spec.json")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # a kill reaches anything it started
        )
        try:
            _, stderr = proc.communicate(timeout=time_cap_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            return {"status": "time", "error": f"stopped after the {time_cap_s:.0f} s cap", "wall_s": time_cap_s}
        wall = time.perf_counter() - t0
        result_file = Path(spec["out"])
        if not result_file.exists():
            last = (stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
            if proc.returncode < 0 and proc.returncode != -signal.SIGKILL:  # SIGKILL: the kernel's OOM killer
                name = signal.Signals(-proc.returncode).name
                return {
                    "status": "signal",
                    "error": f"killed by {name} in {_fault_frame(stderr, last)}",
                    "wall_s": wall,
                }
            status = "memory" if proc.returncode < 0 or "MemoryError" in stderr else "error"
            return {"status": status, "error": f"the process died ({proc.returncode}): {last}", "wall_s": wall}
        return {**json.loads(result_file.read_text()), "wall_s": wall}


def _fault_frame(stderr: str, default: str) -> str:
    """The innermost frame of a fault handler's traceback outside Python's and the installed
    packages' folders (benchcast's own code, a plugin's), else the innermost frame."""
    frames = [line.strip() for line in stderr.splitlines() if line.strip().startswith("File ")]
    installed = tuple({sys.base_prefix, sys.prefix, *site.getsitepackages()})
    own = [f for f in frames if not f.split('"')[1].startswith(installed)] if frames else []
    return (own or frames or [default])[0]


def run(
    sizes: Sequence[Size],
    methods: Sequence[str],
    out: Path,
    *,
    versions: dict[str, Path | None] | None = None,
    budget: int = 100,
    targets: int = 20,
    seed: int = 0,
    memory_cap_gb: float = 16.0,
    time_cap_s: float = 900.0,
    data_dir: Path | None = None,
    params: dict[str, dict] | None = None,
    blas_threads: str = "1",
    log: Callable[[str], None] = print,
) -> pd.DataFrame:
    """Run every (size, method) cell not yet in ``out``, rewriting ``out`` after each. ``params``:
    settings per method where not the defaults (recorded in the table)."""
    params = {**DEFAULT_PARAMS, **(params or {})}
    table = pd.read_csv(out) if out.exists() else pd.DataFrame(columns=COLUMNS)
    if "blas_threads" not in table:  # a table from before the column: one thread per cell
        table["blas_threads"] = "1"
    table["blas_threads"] = table["blas_threads"].astype(str)
    versions = versions or {"after": None}
    data_dir = data_dir or Path(tempfile.gettempdir()) / "benchcast-scaling"
    data_dir.mkdir(parents=True, exist_ok=True)
    for size in sorted(sizes, key=lambda s: (s.models * s.items, s.items)):
        data = None
        for method in methods:
            settings = json.dumps(params.get(method) or {}, sort_keys=True)
            for version, src in versions.items():
                mine = table[
                    (table.version == version)
                    & (table.method == method)
                    & (table.params == settings)
                    & (table.blas_threads == blas_threads)
                ]
                if ((mine.models == size.models) & (mine["items"] == size.items)).any():
                    continue
                stopped = mine[mine.status.isin(STOPPED)]
                smaller = stopped[(stopped.models <= size.models) & (stopped["items"] <= size.items)]
                if len(smaller):
                    at = smaller.iloc[0]
                    row = {"status": "skipped", "error": f"stopped ({at.status}) at {at.models}x{at['items']}"}
                else:
                    data = data or data_file(size, seed, data_dir)
                    row = run_cell(
                        src, method, data, budget, targets, seed, memory_cap_gb, time_cap_s, params.get(method),
                        blas_threads,
                    )  # fmt: skip
                row = {"version": version, "method": method, "models": size.models, "items": size.items, **row}
                row["params"] = settings
                row["blas_threads"] = blas_threads
                log(_describe(row))
                table = pd.concat([table, pd.DataFrame([row])], ignore_index=True)[COLUMNS]
                write_text_atomic(out, table.to_csv(index=False, float_format="%.4g"))
    return table


def _describe(row: dict) -> str:
    where = f"{row['version']:6s} {row['method']:24s} {row['models']}x{row['items']}"
    if row["status"] != "ok":
        return f"{where}: {row['status']}: {row.get('error', '')}"
    return (
        f"{where}: fit {row['fit_s']:.1f}s, estimate {row['estimate_s']:.2f}s, select {row['select_s']:.2f}s, "
        f"peak {row['peak_gb']:.2f} GB (data {row['data_gb']:.2f} GB)"
    )


def growth(table: pd.DataFrame, value: str = "work_s", min_value: float = 0.5) -> pd.DataFrame:
    """Per (version, method), the exponents ``b_models``, ``b_items`` of ``value ~ models^b_models *
    items^b_items``, least squares in logs over the sizes the method completed with ``value`` at
    least ``min_value`` (below half a second the timer's noise and Python's fixed costs swamp the
    growth). ``work_s`` is fit plus estimate seconds. NaN where the sizes do not separate models from
    items (fewer than three, or all on one line in logs)."""
    done = table[table.status == "ok"].copy()
    done["work_s"] = done.fit_s.astype(float) + done.estimate_s.astype(float)
    rows = []
    for (version, method), part in done.groupby(["version", "method"], sort=True):
        part = part[part[value].astype(float) >= min_value]
        logs = [np.ones(len(part)), np.log(part.models.astype(float)), np.log(part["items"].astype(float))]
        design = np.column_stack(logs)
        b = [np.nan, np.nan]
        if len(part) >= 3 and np.linalg.matrix_rank(design) == 3:
            coef, *_ = np.linalg.lstsq(design, np.log(part[value].to_numpy(float)), rcond=None)
            b = coef[1:]
        rows.append({"version": version, "method": method, "sizes": len(part), "b_models": b[0], "b_items": b[1]})
    return pd.DataFrame(rows, columns=["version", "method", "sizes", "b_models", "b_items"])
