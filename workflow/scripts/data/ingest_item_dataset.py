from benchcast.data.catalog import load_catalog
from benchcast.data.item_level import build_tables, write_tables
from benchcast.data.raw_files import verify_checksums
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
spec = load_catalog(snakemake.params.catalog)[snakemake.wildcards.dataset]
verify_checksums(spec, snakemake.config["raw_dir"], log=log)
tables = build_tables(spec, snakemake.config["raw_dir"], log=log)
write_tables(
    tables,
    {"responses": snakemake.output.responses, "models": snakemake.output.models, "items": snakemake.output.item_table},
)
