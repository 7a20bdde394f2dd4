from benchcast.studies.mdad.outputs import write_tables
from benchcast.workflow.support import job_logger

p = snakemake.params
write_tables(
    p.cells,
    snakemake.input.runs,
    snakemake.input.timing,
    {
        "agreement": p.agreement,
        "tolerance": p.tolerance,
        "table3": p.table3,
        "sensitivity": p.sensitivity,
        "selectors": p.selectors,
        "run": p.run,
    },
    p.paper_files,
    snakemake.input.paper_runtime,
    dict(snakemake.output.items()),
    p.seed,
    job_logger(snakemake),
)
