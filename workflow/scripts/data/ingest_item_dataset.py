from benchcast.data.catalog import load_catalog
from benchcast.data.item_level import build_tables, write_tables
from benchcast.data.raw_files import verify_checksums
from benchcast.lm_eval.board import read_logs_dataset
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
spec = load_catalog(snakemake.params.catalog)[snakemake.wildcards.dataset]
files = {role: snakemake.input[role] for role in spec.files}  # the raw files, as the rule resolved them
verify_checksums(spec, files, log=log)
tables = build_tables(spec, files, log=log, harness_reader=read_logs_dataset)
write_tables(
    tables,
    {"responses": snakemake.output.responses, "models": snakemake.output.models, "items": snakemake.output.item_table},
)
