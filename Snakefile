# benchcast workflow: raw leaderboard dumps -> Parquet -> experiment jobs -> figures/tables -> report.
# Logic lives in the benchcast package (src/benchcast); rule files only wire files together.

configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
# A study's rules are loaded when config `studies` lists it (so a catalog without its datasets is fine).
if "misses_the_mark" in config["studies"]:

    include: "workflow/rules/misses_the_mark.smk"


include: "workflow/rules/irt_validation.smk"


if "benchpress" in config["studies"]:

    include: "workflow/rules/benchpress.smk"



report: "workflow/report/workflow.rst"


rule all:
    input:
        mtm_final_outputs() if "misses_the_mark" in config["studies"] else [],
        bp_final_outputs() if "benchpress" in config["studies"] else [],
    default_target: True


rule aggregate_data:
    """Ingest every aggregate (models x benchmarks) dataset of the catalog."""
    input:
        expand("results/data/{dataset}/scores.parquet", dataset=CATALOG.names("aggregate")),
