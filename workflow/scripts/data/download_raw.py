from benchcast.data.catalog import load_catalog
from benchcast.data.download import download, find_file
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
catalog = load_catalog(snakemake.params.catalog)
spec, role = find_file(catalog, snakemake.wildcards.source, snakemake.wildcards.path)
download(spec.url(role, snakemake.params.url_template), snakemake.output[0], spec.files[role].sha256, log=log)
