from benchcast.studies.mdad.outputs import write_same_size
from benchcast.workflow.support import job_logger

p = snakemake.params
write_same_size(
    p.cells, snakemake.input.runs, p.agreement, snakemake.output.table, snakemake.output.figure, p.seed,
    job_logger(snakemake),
)  # fmt: skip
