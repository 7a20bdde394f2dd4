"""Exceptions with messages that name the file, the field and the fix.

Every user-facing failure in benchcast is one of these, so a workflow log or a CLI
run ends with one readable line instead of a traceback from deep inside numpy.
"""

from __future__ import annotations

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
        super().__init__(f"{self.path}: field '{field}': {problem}. Fix: {fix}")


class UnsafePickleError(DataError):
    """A pickle asked for a class outside the allow-list (or is not a pickle we understand)."""


class ConfigError(BenchcastError, ValueError):
    """Bad configuration: unknown dataset or method, inconsistent parameters."""


class BudgetExceeded(BenchcastError, RuntimeError):
    """A method asked the oracle for more distinct items than its budget allows."""
