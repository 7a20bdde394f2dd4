"""Exceptions with messages that name the file, the field and the fix.

Every user-facing failure in benchcast is one of these, so a workflow log or a CLI
run ends with one readable line instead of a traceback from deep inside numpy.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path


class BenchcastError(Exception):
    """Base class of every benchcast error."""


class DataError(BenchcastError, ValueError):
    """Bad input data: says which file, which field (row/column/key) and how to fix it."""

    def __init__(self, path: str | Path | None, field: str, problem: str, fix: str):
        self.path = str(path) if path is not None else "<in-memory>"
        self.field = field
        self.problem = problem
        self.fix = fix
        stop = "" if problem.endswith((".", "?", "!")) else "."
        super().__init__(f"{self.path}: field '{field}': {problem}{stop} Fix: {fix}")


class UnsafePickleError(DataError):
    """A pickle asked for a class outside the allow-list (or is not a pickle we understand)."""


def refuse_cells(bad, values, path: str | Path, field: str, problem: str, fix: str) -> None:
    """A :class:`DataError` naming the first cell ``[i, j]`` of a matrix where ``bad`` (a boolean
    array) holds, if any: ``problem`` is formatted with that cell's ``value`` and the ``count`` of
    such cells."""
    if bad.any():
        i, j = (int(axis[0]) for axis in bad.nonzero())
        raise DataError(path, f"{field}[{i}, {j}]", problem.format(value=values[i, j], count=int(bad.sum())), fix)


class ConfigError(BenchcastError, ValueError):
    """Bad configuration: unknown dataset or method, inconsistent parameters."""


class DiskFull(BenchcastError, OSError):
    """A write stopped because the filesystem is full (or the user's quota reached): names the file,
    the space left there, and what is known of the space the file needed."""

    def __init__(self, path: str | Path, free: int | None, total: int | None, written: int | None, needed: int | None):
        self.path, self.free, self.total, self.written = str(path), free, total, written
        where = f"{_size(free)} free of {_size(total)} on its filesystem" if free is not None else "its filesystem"
        if needed is not None:
            need = f"; it needs {_size(needed)}"
        elif written:
            need = f"; it needs more than the {_size(written)} written before the disk filled"
        else:
            need = ""
        super().__init__(
            f"{self.path}: the disk is full (no space left on device): {where}{need}. Nothing was written there. "
            "Fix: free space on that filesystem, or write to another one (the workflow's results/ folder, "
            "benchcast's --data-dir / --out)"
        )

    def needing(self, needed: int) -> DiskFull:
        """The same error, with the file's size once the writer knows it."""
        return DiskFull(self.path, self.free, self.total, self.written, needed)


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


class BudgetExceeded(BenchcastError, RuntimeError):
    """A method asked the oracle for more distinct items than its budget allows."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` (up to three close names, as :func:`difflib.get_close_matches`
    finds them), or ``""``: the tail of an "unknown name" message."""
    close = difflib.get_close_matches(str(word), sorted({str(c) for c in choices}), n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?"


def keyword_names(fn: Callable) -> tuple[str, ...] | None:
    """The keyword arguments ``fn`` (a function or a class) takes; None when it takes any (``**kwargs``)
    and does not list them in a ``param_names`` attribute."""
    names = getattr(fn, "param_names", None)
    if names is not None:
        return tuple(names)
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(p.name for p in params if p.kind in kinds)


def check_keywords(fn: Callable, params: Mapping, what: str, skip: int = 0) -> None:
    """Refuse a parameter name ``fn`` does not take, with the closest one it does: the check of a
    method's (or completer's) settings before any job runs. ``what`` starts the message (``config
    misses_the_mark.methods: method 'aipw'``); ``skip`` leading positional arguments are data, not
    settings (a completer's matrix)."""
    names = keyword_names(fn)
    if names is None:
        return
    names = names[skip:]
    for key in params:
        if key not in names:
            known = ", ".join(names) if names else "none"
            raise ConfigError(
                f"{what}: unknown parameter '{key}'{did_you_mean(key, names) or '.'} Fix: use one of its "
                f"parameters ({known})"
            )
