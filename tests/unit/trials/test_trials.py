"""Tests for benchcast.trials.runner: splits table, run_job outputs, determinism, fit reuse, paired core sets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import FAST, REPO
from simdata import logistic_scores
from threadpoolctl import threadpool_limits

from benchcast import seeding
from benchcast.data.item_level import ResponseMatrix
from benchcast.methods import REGISTRY
from benchcast.methods.base import random_coreset
from benchcast.trials.runner import run_job, splits_by_trial, trial_splits
from benchcast.trials.splits import extrapolation_split

SEED = 1234
N_MODELS, N_ITEMS, BUDGET, TRIALS = 40, 80, 7, 3


@pytest.fixture(autouse=True)
def _single_blas_thread():
    with threadpool_limits(limits=1):
        yield


def make_matrix(seed: int = 0) -> ResponseMatrix:
    scores = logistic_scores(N_MODELS, N_ITEMS, seed)
    ids = [f"m{i:02d}" for i in range(N_MODELS)]
    return ResponseMatrix(
        dataset="gen",
        scores=scores,
        model_ids=ids,
        model_names=list(ids),
        item_ids=[f"gen/{j:02d}" for j in range(N_ITEMS)],
        subtasks=["gen"] * N_ITEMS,
    )


@pytest.fixture(scope="module")
def matrix() -> ResponseMatrix:
    return make_matrix()


# --------------------------------------------------------------------------- splits table


def test_make_splits_interpolation_table(matrix):
    sp = trial_splits(matrix, "interpolation", TRIALS, SEED)
    assert list(sp.columns) == ["trial", "model_id", "role"]
    assert sp["trial"].dtype == np.int32
    assert len(sp) == TRIALS * N_MODELS
    for t in range(TRIALS):
        g = sp[sp.trial == t]
        assert sorted(g.model_id) == sorted(matrix.model_ids)
        assert (g.role == "target").sum() == int(0.25 * N_MODELS)
        assert (g.role == "source").sum() == N_MODELS - int(0.25 * N_MODELS)
        # the split is the one drawn from the trial's "split" stream
        perm = seeding.rng(SEED, t, "split").permutation(N_MODELS)
        assert set(g.loc[g.role == "target", "model_id"]) == {matrix.model_ids[i] for i in perm[:10]}
    # different trials, different splits
    t0 = set(sp[(sp.trial == 0) & (sp.role == "target")].model_id)
    t1 = set(sp[(sp.trial == 1) & (sp.role == "target")].model_id)
    assert t0 != t1
    by = splits_by_trial(sp, matrix)
    assert sorted(by) == list(range(TRIALS))
    src, tgt = by[0]
    assert {matrix.model_ids[i] for i in tgt} == t0
    assert len(np.intersect1d(src, tgt)) == 0


def test_make_splits_extrapolation_is_the_same_every_trial(matrix):
    sp = trial_splits(matrix, "extrapolation", TRIALS, SEED)
    ref = extrapolation_split(matrix.accuracy())
    by = splits_by_trial(sp, matrix)
    for t in range(TRIALS):
        np.testing.assert_array_equal(np.sort(by[t][0]), ref.source)
        np.testing.assert_array_equal(np.sort(by[t][1]), ref.target)


def test_splits_by_trial_unknown_model_fails(matrix):
    sp = trial_splits(matrix, "interpolation", 1, SEED)
    sp.loc[0, "model_id"] = "ghost"
    with pytest.raises(KeyError):
        splits_by_trial(sp, matrix)


# --------------------------------------------------------------------------- run_job


@pytest.mark.parametrize("method", sorted(REGISTRY))
def test_run_job_outputs(matrix, method):
    sp = trial_splits(matrix, "interpolation", TRIALS, SEED)
    logs: list[str] = []
    res = run_job(matrix, sp, method, FAST.get(method), BUDGET, SEED, log=logs.append)
    est = res.estimates
    assert list(est.columns) == ["trial", "model_id", "estimate", "truth", "items_queried"]
    assert est["trial"].dtype == np.int32
    assert est["estimate"].dtype == np.float64 and est["truth"].dtype == np.float64
    assert est["items_queried"].dtype == np.int32
    assert est["model_id"].map(type).eq(str).all()
    # one row per (trial, target)
    n_tgt = int(0.25 * N_MODELS)
    assert len(est) == TRIALS * n_tgt
    assert not est.duplicated(["trial", "model_id"]).any()
    by = splits_by_trial(sp, matrix)
    pos = {m: i for i, m in enumerate(matrix.model_ids)}
    for t in range(TRIALS):
        g = est[est.trial == t]
        assert sorted(g.model_id) == sorted(matrix.model_ids[i] for i in by[t][1])
    # truth = the target's full-benchmark mean
    rows = est["model_id"].map(pos).to_numpy()
    np.testing.assert_array_equal(est["truth"].to_numpy(), matrix.scores[rows].mean(axis=1))
    assert (est["items_queried"] <= BUDGET).all() and (est["items_queried"] >= 0).all()
    assert np.isfinite(est["estimate"]).all()
    # timing: one row per trial
    tim = res.timing
    assert list(tim.columns) == ["trial", "fit_seconds", "estimate_seconds", "fit_reused"]
    assert tim["trial"].tolist() == list(range(TRIALS))
    assert (tim["fit_seconds"] >= 0).all() and (tim["estimate_seconds"] >= 0).all()
    assert tim["fit_reused"].dtype == bool and not tim["fit_reused"].any()  # interpolation: new sources
    # progress reported, ending at the last trial
    assert logs and f"trial {TRIALS} of {TRIALS}" in logs[-1]


@pytest.mark.parametrize("method", sorted(REGISTRY))
def test_run_job_is_deterministic(matrix, method):
    sp = trial_splits(matrix, "interpolation", 2, SEED)
    a = run_job(matrix, sp, method, FAST.get(method), BUDGET, SEED).estimates
    b = run_job(
        matrix, trial_splits(matrix, "interpolation", 2, SEED), method, FAST.get(method), BUDGET, SEED
    ).estimates
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    c = run_job(matrix, sp, method, FAST.get(method), BUDGET, SEED + 1).estimates
    if method not in ("lasso", "sort_and_search"):  # their fits do not use randomness
        assert not np.array_equal(a["estimate"].to_numpy(), c["estimate"].to_numpy())


def test_random_sampling_known_answer(matrix):
    sp = trial_splits(matrix, "interpolation", TRIALS, SEED)
    est = run_job(matrix, sp, "random_sampling", None, BUDGET, SEED).estimates
    by = splits_by_trial(sp, matrix)
    for t in range(TRIALS):
        core = random_coreset(N_ITEMS, BUDGET, seeding.rng(SEED, t, "coreset"))
        _, tgt = by[t]
        g = est[est.trial == t]
        np.testing.assert_allclose(g["estimate"].to_numpy(), matrix.scores[np.ix_(tgt, core)].mean(axis=1), atol=1e-15)
        assert g["items_queried"].tolist() == [BUDGET] * len(tgt)


def test_extrapolation_lasso_reuses_fit(matrix):
    sp = trial_splits(matrix, "extrapolation", TRIALS, SEED)
    res = run_job(matrix, sp, "lasso", FAST["lasso"], BUDGET, SEED)
    assert res.timing["fit_reused"].tolist() == [False] + [True] * (TRIALS - 1)
    est = res.estimates
    first = est[est.trial == 0]["estimate"].to_numpy()
    for t in range(1, TRIALS):
        np.testing.assert_array_equal(est[est.trial == t]["estimate"].to_numpy(), first)
    ref = extrapolation_split(matrix.accuracy())
    assert len(est) == TRIALS * len(ref.target)


def test_interpolation_lasso_does_not_reuse_fit(matrix):
    sp = trial_splits(matrix, "interpolation", TRIALS, SEED)
    res = run_job(matrix, sp, "lasso", FAST["lasso"], BUDGET, SEED)
    assert not res.timing["fit_reused"].any()


def test_extrapolation_random_methods_do_not_reuse_fit(matrix):
    sp = trial_splits(matrix, "extrapolation", TRIALS, SEED)
    res = run_job(matrix, sp, "random_sampling", None, BUDGET, SEED)
    assert not res.timing["fit_reused"].any()
    est = res.estimates
    assert not np.array_equal(est[est.trial == 0]["estimate"].to_numpy(), est[est.trial == 1]["estimate"].to_numpy())


def test_coreset_methods_share_the_trial_core_set(matrix, monkeypatch):
    shared = ["random_sampling", "random_sampling_learn", "aipw", "pca"]
    recorded: dict[str, list[np.ndarray]] = {}
    for name in shared:
        base = REGISTRY[name]
        assert base.uses_coreset_stream is True

        def make_recorder(base=base, name=name):
            class Recorder(base):
                def fit(self, source, budget, rng):
                    out = super().fit(source, budget, rng)
                    recorded.setdefault(name, []).append(self.coreset_.copy())
                    return out

            return Recorder

        monkeypatch.setitem(REGISTRY, name, make_recorder())
    for sk in ("interpolation", "extrapolation"):
        recorded.clear()
        sp = trial_splits(matrix, sk, TRIALS, SEED)
        for name in shared:
            res = run_job(matrix, sp, name, FAST.get(name), BUDGET, SEED)
            assert (res.estimates["items_queried"] == BUDGET).all()
        for t in range(TRIALS):
            expected = random_coreset(N_ITEMS, BUDGET, seeding.rng(SEED, t, "coreset"))
            for name in shared:
                np.testing.assert_array_equal(recorded[name][t], expected, err_msg=f"{sk} {name} trial {t}")
        assert not np.array_equal(recorded["aipw"][0], recorded["aipw"][1])
    # random_search_learn draws from its own stream, not the shared core set
    assert REGISTRY["random_search_learn"].uses_coreset_stream is False


def test_run_job_budget_too_large_fails(matrix):
    from benchcast.errors import BudgetExceeded

    sp = trial_splits(matrix, "interpolation", 1, SEED)
    with pytest.raises(BudgetExceeded):
        run_job(matrix, sp, "random_sampling", None, N_ITEMS, SEED)


def test_per_target_similarity_cache_shared_across_runs(matrix, tmp_path, monkeypatch):
    """Figure 4's job reads every run of a dataset: a shared cache computes each trial's
    similarities once, and gives the same table as computing them afresh (eq. 4 by hand)."""
    from benchcast.stats import metrics
    from benchcast.studies.misses_the_mark import analysis as mtm

    sp = trial_splits(matrix, "interpolation", TRIALS, SEED)
    paths = []
    for method in ("random_sampling", "aipw"):
        path = tmp_path / f"{method}.parquet"
        run_job(matrix, sp, method, None, BUDGET, SEED).estimates.to_parquet(path)
        paths.append(path)
    calls = []
    real = metrics.model_similarity
    monkeypatch.setattr(mtm, "model_similarity", lambda *a: calls.append(1) or real(*a))
    cache = {}
    shared = [mtm.per_target(p, sp, matrix, cache) for p in paths]
    assert len(calls) == TRIALS  # once per trial, not per run
    for p, got in zip(paths, shared):
        pd.testing.assert_frame_equal(got, mtm.per_target(p, sp, matrix))
    by = splits_by_trial(sp, matrix)
    pos = {m: i for i, m in enumerate(matrix.model_ids)}
    row = shared[1].iloc[0]
    src, _ = by[int(row.trial)]
    want = real(matrix.scores[[pos[row.model_id]]], matrix.scores[src])[0]
    assert row.similarity == pytest.approx(want, abs=1e-12)


def test_trials_import_leaves_scipy_to_the_methods_that_use_it():
    """Every workflow job imports the trial runner (and through it the method registry); SciPy's
    linalg / special / optimize cost ~0.1-0.3 s each to import, so only the methods that call
    them import them, on first use."""
    import subprocess
    import sys

    code = (
        "import sys, benchcast.trials.runner; "
        "print(sorted(m for m in ('scipy.linalg', 'scipy.special', 'scipy.optimize', 'sklearn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_single_threaded_reaches_blas_libraries_loaded_later():
    """Jobs call single_threaded() before SciPy is loaded; SciPy's own OpenBLAS, loaded
    afterwards, must still run one thread (the environment variables it reads at load)."""
    import subprocess
    import sys

    code = (
        "from benchcast.blas import single_threaded; single_threaded(); "
        "import sys; assert 'scipy.linalg' not in sys.modules; "
        "import scipy.linalg; from threadpoolctl import threadpool_info; "
        "print(sorted({(i['filepath'].rsplit('/', 1)[-1], i['num_threads']) for i in threadpool_info()}))"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.endswith("_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    libs = eval(out)
    assert len(libs) >= 2, libs  # NumPy's BLAS and SciPy's, loaded later
    assert all(n == 1 for _, n in libs), libs


def test_job_failures_reach_the_log_and_the_console_as_one_line(tmp_path):
    """A benchcast error in a workflow script: one line (file, field, fix) in the rule's log and on
    stderr, no traceback; any other error: its traceback in both."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent("""
        import sys
        from types import SimpleNamespace
        from benchcast.errors import DataError
        from benchcast.workflow.support import job_logger
        log = job_logger(SimpleNamespace(log=[sys.argv[1]], rule="ingest_x"))
        log("started")
        if sys.argv[2] == "data":
            raise DataError("raw/x.jbl", "sha256", "checksum mismatch", "restore the file")
        raise KeyError("boom")
    """)
    )
    for kind in ("data", "bug"):
        log = tmp_path / f"{kind}.log"
        proc = subprocess.run(
            [sys.executable, str(script), str(log), kind], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 1
        text = log.read_text()
        if kind == "data":
            line = "ERROR in rule ingest_x: raw/x.jbl: field 'sha256': checksum mismatch. Fix: restore the file"
            assert line in text and proc.stderr.strip() == f"{line} (log: {log})"
        else:
            assert "Traceback" in text and "KeyError: 'boom'" in text and "KeyError: 'boom'" in proc.stderr


def test_snakemake_rate_limit_timers_become_daemons():
    """The profile's 60 s re-poll timer must not hold Snakemake's exit (idle tail). The fix patches a
    private method, so it is checked against the pinned Snakemake: moving the pin fails here until the
    fix is checked again (and IDLE_TAIL_CHECKED names the new version)."""
    import threading

    import snakemake
    from snakemake.scheduling.job_scheduler import JobScheduler

    from benchcast.workflow.support import IDLE_TAIL_CHECKED, exit_without_idle_tail

    requirements = (REPO / "requirements.txt").read_text().splitlines()
    (pin,) = [line.split("==")[1] for line in requirements if line.startswith("snakemake==")]
    assert pin in IDLE_TAIL_CHECKED and snakemake.__version__ == pin
    assert hasattr(JobScheduler, "_schedule_reevalutation"), "Snakemake renamed the method the fix patches"
    assert exit_without_idle_tail()
    fake = type("FakeScheduler", (), {"_open_jobs": threading.Semaphore(0)})()
    before = set(threading.enumerate())
    JobScheduler._schedule_reevalutation(fake, 3600)
    (timer,) = set(threading.enumerate()) - before
    assert timer.daemon
    timer.cancel()
