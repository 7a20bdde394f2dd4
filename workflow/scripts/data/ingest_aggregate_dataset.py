from pathlib import Path

from benchcast.data.aggregate import write_aggregate
from benchcast.data.aggregate_ingest import read_aggregate
from benchcast.data.catalog import load_catalog
from benchcast.data.raw_files import verify_checksums
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
catalog = load_catalog(snakemake.params.catalog)
spec = catalog[snakemake.wildcards.dataset]
files = {role: snakemake.input[role] for role in spec.files}  # the raw files, as the rule resolved them
verify_checksums(spec, files, log=log)
tables = read_aggregate(spec, files)
write_aggregate(tables, Path(snakemake.output.models).parent)
log(
    f"{spec.name}: {len(tables.models)} models, {len(tables.benchmarks)} benchmarks, {len(tables.scores)} observed cells"
)
if "scale" in tables.benchmarks.columns:
    counts = tables.benchmarks["scale"].value_counts(dropna=False)
    log(
        f"benchmark scales: {', '.join(f'{k}={v}' for k, v in counts.items())}"
        + (f" (inventory {spec.files['inventory'].path})" if "inventory" in spec.files else " (inferred)")
    )
