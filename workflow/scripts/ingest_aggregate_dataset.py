from pathlib import Path

from benchcast.data.aggregate import write_aggregate
from benchcast.data.aggregate_ingest import read_aggregate
from benchcast.data.catalog import load_catalog
from benchcast.workflow_support import job_logger

log = job_logger(snakemake)
spec = load_catalog(snakemake.params.catalog)[snakemake.wildcards.dataset]
tables = read_aggregate(spec, snakemake.config["raw_dir"])
write_aggregate(tables, Path(snakemake.output.models).parent)
log(f"{spec.name}: {len(tables.models)} models, {len(tables.benchmarks)} benchmarks, {len(tables.scores)} observed cells")
