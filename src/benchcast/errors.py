"""Exceptions with messages that name the file, the field and the fix.

Every user-facing failure in benchcast is one of these, so a workflow log or a CLI
run ends with one readable line instead of a traceback from deep inside numpy.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
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


class ConfigError(BenchcastError, ValueError):
    """Bad configuration: unknown dataset or method, inconsistent parameters."""


class BudgetExceeded(BenchcastError, RuntimeError):
    """A method asked the oracle for more distinct items than its budget allows."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` (up to three close names, as :func:`difflib.get_close_matches`
    finds them), or ``""``: the tail of an "unknown name" message."""
    close = difflib.get_close_matches(word, sorted(set(choices)), n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?"
