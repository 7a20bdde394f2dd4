from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.errors import ConfigError
from benchcast.studies.mdad.protocol import run_cell, select_models
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w, p = snakemake.wildcards, snakemake.params
matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset, min_accuracy=p.min_accuracy)
models = pd.read_parquet(snakemake.input.models).set_index("model_id").loc[list(matrix.model_ids)].reset_index()
spec = dict(p.group)
targets = select_models(models, tuple(spec["params_b"]) if "params_b" in spec else None, spec.get("name_regex"))
if len(targets) < 2:
    raise ConfigError(
        f"config mdad.same_size.groups.{w.group}: {len(targets)} model(s) of '{w.dataset}' match {spec}. "
        "Fix: widen params_b or name_regex"
    )
n_source = min(int(p.n_source), len(matrix.model_ids) - len(targets))
sizes = [int(k) for k in p.sizes if k < matrix.scores.shape[1] // 2]
log(f"{w.dataset} group {w.group}: {len(targets)} target models, {n_source} sources, sizes {sizes}, {w.method}")
with threadpool_limits(1):
    estimates, _ = run_cell(
        matrix.scores,
        matrix.subtasks,
        w.method,
        dict(p.method_params),
        n_source,
        sizes,
        p.trials,
        p.seed,
        fixed_targets=targets,
    )
write_parquet_atomic(estimates.assign(model_id=[matrix.model_ids[i] for i in estimates.model_idx]), snakemake.output[0])
