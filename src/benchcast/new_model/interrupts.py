"""Interrupts: Ctrl-C (SIGINT) and SIGTERM end a command the same way -- every file is written
through a temporary name, removed on the way out, the processes it started are stopped, and it
exits 130 or 143 (128 + the signal).

Python turns SIGINT into :class:`KeyboardInterrupt`; SIGTERM, by default, kills the process
outright, leaving its temporary files and its worker processes behind. The command line (and only
it: a program that imports benchcast keeps its own handlers) runs inside :func:`terminate_as_interrupt`,
so SIGTERM raises :class:`Terminated`, a :class:`KeyboardInterrupt`, and every cleanup that holds
for Ctrl-C holds for it.
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be (:func:`terminate_as_interrupt`)."""


def exit_status(exc: KeyboardInterrupt) -> int:
    """The exit status of a command ended by ``exc``: 143 for SIGTERM, 130 for Ctrl-C."""
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)


def ended_by(exc: KeyboardInterrupt) -> tuple[str, int]:
    """The command's last line and exit status after ``exc`` (Ctrl-C or SIGTERM)."""
    word = "terminated" if isinstance(exc, Terminated) else "interrupted"
    return f"benchcast: {word}; nothing was left half-written", exit_status(exc)


def _raise_terminated(signum, frame) -> None:
    if os.getpid() != _OWNER:  # a forked worker that has not set its own handlers yet: die as by default
        os._exit(128 + signum)
    raise Terminated


_OWNER = os.getpid()


@contextmanager
def terminate_as_interrupt():
    """Inside, SIGTERM raises :class:`Terminated` in this process (the main thread only); the
    handler before is back at the end (``benchcast.cli.main`` called from a program)."""
    global _OWNER
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _OWNER = os.getpid()
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def worker_defaults() -> None:
    """In a worker process: Ctrl-C ignored (it is the parent's to act on: it stops the workers),
    SIGTERM back to its default (the parent stops a worker with it or SIGKILL)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def interrupts_held():
    """A Ctrl-C (or a SIGTERM that :func:`terminate_as_interrupt` turned into an exception) arriving
    inside is noted and raised when the block ends, not inside it (where a ctypes callback or a
    process being started would lose it). A process forked inside inherits the noting handler: it
    dies at once on SIGTERM and ignores Ctrl-C until it sets its own (:func:`worker_defaults`).
    Outside the main thread, which alone receives signals in Python, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner, noted = os.getpid(), []

    def note(signum, frame):
        if os.getpid() != owner:
            if signum == signal.SIGTERM:
                os._exit(128 + signum)
            return
        noted.append(signum)

    held = [signal.SIGINT]
    if signal.getsignal(signal.SIGTERM) is _raise_terminated:
        held.append(signal.SIGTERM)
    previous = {s: signal.signal(s, note) for s in held}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if signal.SIGTERM in noted:
        raise Terminated
    if noted and previous[signal.SIGINT] is not signal.SIG_IGN:
        raise KeyboardInterrupt


class _HeldLoader:
    """A module's loader whose ``exec_module`` runs with interrupts held when it is the outermost
    import (:func:`imports_held`)."""

    def __init__(self, loader, depth: list[int]):
        self._loader, self._depth = loader, depth

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        if self._depth[0]:
            self._loader.exec_module(module)
            return
        self._depth[0] += 1
        try:
            with interrupts_held():
                self._loader.exec_module(module)
        finally:
            self._depth[0] -= 1


class _HeldFinder:
    """First on ``sys.meta_path``: finds a module with the finders after it, then holds
    interrupts while it loads (:func:`imports_held`)."""

    def __init__(self):
        self.depth = [0]

    def find_spec(self, name, path=None, target=None):
        import sys

        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _HeldLoader(spec.loader, self.depth)
                return spec
        return None


@contextmanager
def imports_held():
    """Inside, a Ctrl-C or SIGTERM that arrives while a module loads is raised when the outermost
    import ends. A fit imports SciPy and scikit-learn on first use (about a thousand modules); an
    interrupt inside a compiled module's initialisation comes out as an ``ImportError`` that a
    library's ``try: import ... except ImportError`` swallows, or leaves the interpreter to die
    by the signal after the command has ended."""
    import sys

    if any(isinstance(f, _HeldFinder) for f in sys.meta_path):  # already held (main inside run)
        yield
        return
    finder = _HeldFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
