"""One cell of the scaling benchmark, in its own process: one method on one synthetic matrix.

Run as a file (``python cell.py SPEC.json``), never imported by the rest of benchcast, so that the
benchmark can run it against another checkout's methods (``PYTHONPATH=<that checkout>/src``): it
uses only the method protocol that every version has (``make_method``, ``fit``, ``estimate``
through an :class:`~benchcast.oracle.Oracle`, the seed streams of the trial runner, the replay of
the new-model commands).

It measures, as the workflow's trial runner and the new-model commands run a method:

* ``fit_s``: ``fit`` on the source rows (every row but the last ``targets``; a method with a
  prefit makes its own, as outside the workflow, so the IRT fit is counted);
* ``estimate_s``: ``estimate`` of the ``targets`` last rows through one oracle;
* ``select_s``: what ``benchcast select`` computes with a built fit (the replay up to the
  first batch of items; for a static method, its whole core set);
* ``estimate_one_s``: what ``benchcast estimate`` computes with a built fit (the replay of one
  target that has answered every item the method asked for);
* ``data_gb``: the process's resident memory once the matrix is loaded as float64 (the
  methods' input type), and ``peak_gb``: its peak over the whole cell.

The memory cap is ``RLIMIT_AS`` (address space), so an allocation past it fails in the cell
instead of exhausting the machine; the parent enforces the time cap by killing the process.
"""

from __future__ import annotations

import json
import resource
import sys
import time
import traceback


def _peak_gb() -> float:
    """The process's peak resident memory: ``VmHWM``, which starts afresh at ``exec`` (``ru_maxrss``
    keeps the peak of the process it was forked from: the benchmark's own, after it made the data)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20  # kB
    raise RuntimeError("no VmHWM in /proc/self/status")


def _rss_gb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**30


def _replay_one(method, n_items, budget, row, rng_factory):
    """Replay a new model (``row``: its answers to every item) batch by batch, as a user would
    run ``select`` and answer; returns the seconds of the first select and of the last estimate."""
    from benchcast.new_model.replay import replay

    answers: dict[int, float] = {}
    t0 = time.perf_counter()
    value, _, batch = replay(method, n_items, budget, answers, rng_factory)
    select_s = time.perf_counter() - t0
    while batch is not None:
        answers.update({int(j): float(row[j]) for j in batch})
        t0 = time.perf_counter()
        value, _, batch = replay(method, n_items, budget, answers, rng_factory)
        estimate_s = time.perf_counter() - t0
    return select_s, estimate_s, value


def run(spec: dict) -> dict:
    cap = int(spec["memory_cap_gb"] * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    import numpy as np

    from benchcast import seeding
    from benchcast.methods import make_method
    from benchcast.oracle import Oracle

    data = np.load(spec["data"])
    scores = data["scores"].astype(np.float64)
    subtasks = data["subtasks"]
    out = {"data_gb": _rss_gb()}
    targets, budget, seed, name = int(spec["targets"]), int(spec["budget"]), int(spec["seed"]), spec["method"]
    source, target = scores[:-targets], scores[-targets:]

    m = make_method(name, spec.get("params"))
    stream = "coreset" if m.uses_coreset_stream else (m.rng_stream or f"method:{name}")
    kwargs = {"groups": subtasks.astype(np.int64)} if m.uses_item_groups else {}
    t0 = time.perf_counter()
    m.fit(source, budget, seeding.rng(seed, 0, stream), **kwargs)
    out["fit_s"] = time.perf_counter() - t0
    out["fit_peak_gb"] = _peak_gb()

    oracle = Oracle(target, budget)
    t0 = time.perf_counter()
    est = np.asarray(m.estimate(oracle, seeding.rng(seed, 0, f"estimate:{name}")), dtype=np.float64)
    out["estimate_s"] = time.perf_counter() - t0
    if est.shape != (targets,) or not np.isfinite(est).all():
        raise RuntimeError(f"{name} returned {est.shape} estimates, finite: {np.isfinite(est).all()}")
    out["mae"] = float(np.abs(est - target.mean(axis=1)).mean())

    def rng_factory():
        return seeding.rng(seed, 0, f"estimate:{name}")

    out["select_s"], out["estimate_one_s"], value = _replay_one(m, scores.shape[1], budget, target[0], rng_factory)
    out["replay_gap"] = abs(value - float(est[0]))  # 0 where a target's estimate does not depend on the others
    out["peak_gb"] = _peak_gb()
    return out


def main() -> None:
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    try:
        result = {"status": "ok", **run(spec)}
    except MemoryError:
        result = {"status": "memory", "error": f"an allocation past the {spec['memory_cap_gb']} GB cap"}
    except Exception as err:  # recorded in the table, with the line it came from
        where = traceback.extract_tb(err.__traceback__)[-1]
        result = {"status": "error", "error": f"{type(err).__name__}: {err} ({where.filename}:{where.lineno})"}
    with open(spec["out"], "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
