import pandas as pd

from benchcast.data.item_level import write_parquet_atomic
from benchcast.studies.tailoredbench.analysis import run_metrics
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
frames = [
    run_metrics(pd.read_parquet(path)).assign(setting=setting, budget=int(n))
    for (setting, n), path in zip(snakemake.params.cells, snakemake.input.runs, strict=True)
]
per_run = pd.concat(frames, ignore_index=True)[["setting", "budget", "trial", "tau", "mae", "pairwise"]]
log(f"{len(frames)} jobs, {len(per_run)} runs")
write_parquet_atomic(per_run, snakemake.output[0])
