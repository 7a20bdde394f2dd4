"""Worker processes for the calibration folds, stoppable at any moment.

Each worker has its own pipe to this process and shares no lock with it: this process hands a
worker a task when it is idle and reads its answer. Stopping them is killing them and reaping
them, which cannot wait on anything a worker holds. (``multiprocessing.Pool`` shares a queue and
its lock with every worker: a worker killed while it waits for a task holds that lock, and
``Pool.terminate`` then waits for it forever -- how an interrupted first fit once hung.)

On Linux the workers are forked: they start at once, already holding the library and the job.
Elsewhere they are spawned and the job is pickled to them.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Iterable, Iterator

from benchcast.new_model.interrupts import interrupts_held, worker_defaults


def _serve(conn, function: Callable, job: tuple) -> None:
    worker_defaults()
    while True:
        try:
            task = conn.recv()
        except EOFError:  # the parent is gone
            return
        if task is None:
            return
        try:
            reply = ("done", task, function(job, task))
        except Exception as exc:  # the parent raises it (with the worker's traceback in its text)
            reply = ("failed", task, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        conn.send(reply)


class WorkerError(RuntimeError):
    """A task failed in a worker (or a worker died): its message carries the worker's traceback."""


class Workers:
    """``count`` processes that run ``function(job, task)`` (a module-level function: spawned
    workers import it; tasks are never None); :meth:`run_unordered` yields
    ``(task, result)`` as they finish; :meth:`stop` ends them at once. A context manager: leaving
    it stops them (after an error or an interrupt) or lets them finish their loop."""

    def __init__(self, count: int, function: Callable, job: tuple):
        import multiprocessing

        context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        self.processes, self.pipes = [], []
        try:
            with interrupts_held():  # a signal while they start is raised once all of them exist
                for _ in range(count):
                    here, there = context.Pipe()
                    process = context.Process(target=_serve, args=(there, function, job), daemon=True)
                    process.start()
                    there.close()
                    self.processes.append(process)
                    self.pipes.append(here)
        except BaseException:
            self.stop()
            raise

    def run_unordered(self, tasks: Iterable) -> Iterator[tuple[object, object]]:
        from multiprocessing.connection import wait

        todo, busy = iter(tasks), {}
        for pipe in self.pipes:
            task = next(todo, None)
            if task is None:
                break
            pipe.send(task)
            busy[pipe] = task
        while busy:
            for pipe in wait(list(busy)):
                try:
                    status, task, value = pipe.recv()
                except EOFError:
                    process = self.processes[self.pipes.index(pipe)]
                    process.join(timeout=1)
                    raise WorkerError(
                        f"a calibration process ended while it fitted task {busy[pipe]!r} "
                        f"(exit code {process.exitcode}); fix: run again with --cores 1"
                    ) from None
                del busy[pipe]
                if status == "failed":
                    raise WorkerError(value)
                following = next(todo, None)
                if following is not None:
                    pipe.send(following)
                    busy[pipe] = following
                yield task, value

    def close(self) -> None:
        """Let the workers end their loop (no more tasks) and reap them."""
        for pipe in self.pipes:
            try:
                pipe.send(None)
            except OSError:
                pass
        for process in self.processes:
            process.join()

    def stop(self) -> None:
        """Kill every worker now and reap it: nothing here waits on a worker."""
        for process in self.processes:
            if process.exitcode is None:
                process.kill()
        for process in self.processes:
            process.join()
        for pipe in self.pipes:
            pipe.close()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.close()
        else:
            self.stop()
