import tempfile
from pathlib import Path

import yaml

from benchcast.output.tables import write_table
from benchcast.workflow.dag import dependencies, measured, planned_jobs
from benchcast.workflow.performance import performance_table
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
# Snakemake's own plan of this run's config (the whole resolved config, so --config overrides count too)
with tempfile.TemporaryDirectory() as tmp:
    tmp_config = Path(tmp) / "config.yaml"  # not an output: Snakemake's plan reads it
    tmp_config.write_text(yaml.safe_dump(dict(p.config), sort_keys=True))
    # the rule file's folder (workflow/rules) -> the workflow's Snakefile, wherever the run directory is
    snakefile = next(
        d / "Snakefile" for d in Path(snakemake.scriptdir).resolve().parents if (d / "Snakefile").is_file()
    )
    jobs = planned_jobs(Path.cwd(), [str(tmp_config)], snakefile=snakefile)
table = performance_table(jobs, dependencies(jobs), measured(jobs, Path.cwd()), cores=p.cores, costs=p.costs)
write_table(
    table,
    snakemake.output.csv,
    snakemake.output.md,
    digits=1,
    title="Performance: measured job seconds and peak memory per study and method; per study the critical "
    f"path and the wall time projected on {', '.join(map(str, p.cores))} cores (list scheduling of the job graph)",
)
for r in table[table["method"] == "(all)"].itertuples():
    log(f"{r.study}: {r.jobs} jobs, {r.job_seconds:.0f} job-s, critical path {r.critical_path_s:.0f} s")
