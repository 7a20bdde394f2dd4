"""benchcast.new_model.workers: calibration processes that share no lock with the command."""

import os
import signal
import time

import pytest

from benchcast.new_model.workers import WorkerError, Workers


def square(job, task):
    return job[0] * task * task


def failing(job, task):
    if task == 3:
        raise ValueError("fold 3 cannot be fitted")
    return task


def dying(job, task):
    if task == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return task


def sleeping(job, task):
    time.sleep(60)


def test_every_task_once_whatever_the_order():
    with Workers(2, square, (10,)) as pool:
        got = dict(pool.run_unordered(range(1, 8)))
    assert got == {k: 10 * k * k for k in range(1, 8)}
    assert all(p.exitcode == 0 for p in pool.processes)  # they ended their loop


def test_a_failed_task_raises_with_the_workers_traceback_and_stops_the_others():
    with pytest.raises(WorkerError, match="ValueError: fold 3 cannot be fitted") as caught:
        with Workers(2, failing, ()) as pool:
            list(pool.run_unordered(range(1, 6)))
    assert "Traceback" in str(caught.value)
    assert all(p.exitcode is not None for p in pool.processes)


def test_a_worker_that_dies_is_reported_not_waited_for():
    with pytest.raises(WorkerError, match="ended while it fitted task 2"):
        with Workers(2, dying, ()) as pool:
            list(pool.run_unordered(range(1, 6)))


def timed_out(signum, frame):
    raise TimeoutError


def test_stopping_kills_busy_workers_at_once():
    """As an interrupt does while the command waits for them (``with Workers(...)`` stops them)."""
    pool = Workers(2, sleeping, ())
    tasks = pool.run_unordered([1, 2])
    with pytest.raises(TimeoutError):  # both busy for a minute: an alarm ends the wait
        signal.signal(signal.SIGALRM, timed_out)
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        try:
            next(tasks)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
    started = time.monotonic()
    pool.stop()
    assert time.monotonic() - started < 5 and all(p.exitcode == -signal.SIGKILL for p in pool.processes)
