from benchcast.studies.mdad.outputs import write_percent
from benchcast.workflow.support import job_logger

p, out = snakemake.params, snakemake.output
write_percent(
    p.cells, snakemake.input.runs, p.agreement, out.table, out.figure10, out.figure17, p.seed, job_logger(snakemake)
)
