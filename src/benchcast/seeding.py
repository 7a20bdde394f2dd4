"""The one seed scheme every random choice in benchcast derives from.

A random stream is identified by ``(base_seed, trial, stream)``; :func:`rng` turns it into
an independent ``numpy.random.Generator`` through ``SeedSequence``. Streams:

* ``"split"``   -- which models are sources/targets in a trial (interpolation split);
* ``"coreset"`` -- the random core set shared by every random-sample method in a trial
  (Random-Sampling, -Learn, AIPW, PCA), so their comparison is paired, as in the paper's
  code where each method re-seeds with the trial seed before drawing its permutation;
* ``"method:<name>"`` -- a method's own randomness (e.g. Random-Search-Learn's candidates).

Stream names are hashed with CRC32 (stable across Python runs, unlike ``hash``). Nothing
depends on the dataset, the budget or job order, so a job's outputs are a pure function of
its config, whatever the number of cores.
"""

from __future__ import annotations

import zlib

import numpy as np


def stream_id(stream: str) -> int:
    return zlib.crc32(stream.encode("utf-8"))


def rng(base_seed: int, trial: int, stream: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(base_seed), int(trial), stream_id(stream)]))
