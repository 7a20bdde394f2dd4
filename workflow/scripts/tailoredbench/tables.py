import pandas as pd

from benchcast.studies.tailoredbench.outputs import write_outputs
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
write_outputs(
    pd.read_parquet(snakemake.input.per_run),
    pd.read_csv(snakemake.input.paper),
    dict(p.table6),
    {k: dict(v) for k, v in p.ablations.items()},
    {k: list(v) for k, v in p.figures.items()},
    {k: dict(v) for k, v in p.tolerance.items()},
    dict(snakemake.output.items()),
    log,
    run=p.run,
)
