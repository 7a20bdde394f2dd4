"""Time two codes alternately, so that drifts of the machine hit both alike (shared by the
``*_versions.py`` scripts of this folder)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def alternate(baseline: Callable[[], T], ours: Callable[[], T], repeats: int) -> tuple[list[T], list[T]]:
    """``repeats`` results of each, the baseline's first in every round."""
    base, this = [], []
    for _ in range(repeats):
        base.append(baseline())
        this.append(ours())
    return base, this
