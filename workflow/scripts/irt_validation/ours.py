import time
from pathlib import Path

import numpy as np

from benchcast import seeding
from benchcast.data.io import atomic_path
from benchcast.data.item_level import load_response_matrix
from benchcast.methods.irt_methods import fit_irt
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)  # one BLAS thread, as py-irt gets one torch thread
matrix = load_response_matrix(Path(snakemake.input.models).parent, snakemake.wildcards.dataset)
heldout = np.load(snakemake.input.mask, allow_pickle=False)
params = dict(snakemake.params.irt)
t0 = time.perf_counter()
fit = fit_irt(matrix.scores, seeding.rng(snakemake.params.seed, 0, "irt"), params, observed=~heldout)
seconds = time.perf_counter() - t0
log(f"{matrix.shape} params={params}: {seconds:.2f}s, {fit.n_iter} iterations, converged={fit.converged}")
with atomic_path(snakemake.output[0]) as tmp, open(tmp, "wb") as fh:
    np.savez(
        fh,
        disc=fit.disc,
        diff=fit.diff,
        ability=fit.ability,
        fit_seconds=seconds,
        n_iter=fit.n_iter,
        converged=fit.converged,
    )
