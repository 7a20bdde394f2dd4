"""Source/target model splits (Section 4.2 and 4.3 of "misses the mark").

Both splits act on the rows kept after dropping all-zero models (the paper's loader keeps
models with accuracy > 1e-8; see ``min_accuracy`` in the catalog).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchcast.errors import ConfigError


@dataclass(frozen=True)
class Split:
    source: np.ndarray  # row indices of source models (sorted)
    target: np.ndarray  # row indices of target models (sorted)


def interpolation_split(n_models: int, rng: np.random.Generator, target_fraction: float = 0.25) -> Split:
    """Random split: ``int(target_fraction * M)`` targets, the rest sources (Sec. 4.2).

    Matches the paper's code: targets are the first ``int(0.25 M)`` entries of a random
    permutation.
    """
    n_target = int(target_fraction * n_models)
    perm = rng.permutation(n_models)
    target = np.sort(perm[:n_target])
    source = np.sort(perm[n_target:])
    return Split(source=source, target=target)


def extrapolation_split(accuracy: np.ndarray, source_fraction: float = 0.5, target_fraction: float = 0.3) -> Split:
    """Bottom ``int(0.5 M)`` models by full-benchmark accuracy are sources, top ``int(0.3 M)`` targets (Sec. 4.3).

    Deterministic: ties are broken by row order (stable sort), so every trial uses the
    same split and only the methods' own randomness varies across trials.
    """
    m = len(accuracy)
    order = np.argsort(accuracy, kind="stable")
    n_source, n_target = int(source_fraction * m), int(target_fraction * m)
    return Split(source=np.sort(order[:n_source]), target=np.sort(order[m - n_target :]))


def given_split(file_roles: list[str] | None) -> Split:
    """The roles the dump's own files give (TailoredBench's GSM8K: a source and a target file),
    the same in every trial: only the methods' randomness varies (TailoredBench, Section 4.1)."""
    if not file_roles or not {"source", "target"} <= set(file_roles):
        raise ConfigError(
            "the 'given' split needs a dataset whose files name source and target models (catalog format "
            "npy_pair; models.parquet column file_role). Fix: use the interpolation or extrapolation split"
        )
    roles = np.asarray(file_roles)
    return Split(source=np.flatnonzero(roles == "source"), target=np.flatnonzero(roles == "target"))


SPLITS = ("interpolation", "extrapolation", "given")


def make_split(
    kind: str,
    accuracy: np.ndarray,
    rng: np.random.Generator,
    params: dict | None = None,
    file_roles: list[str] | None = None,
) -> Split:
    params = params or {}
    if kind == "given":
        return given_split(file_roles)
    if kind == "interpolation":
        return interpolation_split(len(accuracy), rng, params.get("target_fraction", 0.25))
    if kind == "extrapolation":
        return extrapolation_split(accuracy, params.get("source_fraction", 0.5), params.get("target_fraction", 0.3))
    raise ConfigError(f"unknown split '{kind}'. Fix: use one of {', '.join(SPLITS)}")
