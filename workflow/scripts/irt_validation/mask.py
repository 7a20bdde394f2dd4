from pathlib import Path

import numpy as np

from benchcast import seeding
from benchcast.data.io import atomic_path
from benchcast.data.item_level import load_response_matrix
from benchcast.studies.irt_validation.analysis import make_mask
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
matrix = load_response_matrix(Path(snakemake.input.models).parent, snakemake.wildcards.dataset)
mask = make_mask(matrix.shape, snakemake.params.fraction, seeding.rng(snakemake.params.seed, 0, "irt_validation"))
with atomic_path(snakemake.output[0]) as tmp, open(tmp, "wb") as fh:
    np.save(fh, mask)
log(f"{matrix.shape}: {int(mask.sum())} held-out cells")
