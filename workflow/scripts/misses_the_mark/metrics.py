from benchcast.data.item_level import write_parquet_atomic
from benchcast.studies.misses_the_mark.analysis import cell_metrics
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
runs = [dict(c, path=p) for c, p in zip(snakemake.params.cells, snakemake.input.runs)]
cells = cell_metrics(runs)
log(f"{len(cells)} cells")
write_parquet_atomic(cells, snakemake.output.cells)
