# benchcast workflow: raw leaderboard dumps -> Parquet -> experiment jobs -> figures/tables -> report.
# Logic lives in the benchcast package (src/benchcast); rule files only wire files together.
# Layout: the shared rules (workflow/rules/common.smk, data.smk), then one rules file per study
# listed in config `studies` (registry and conventions: workflow/rules/common.smk; README "Architecture").

configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"


# the selected studies, after the studies they ask to run methods under their protocols (RULE_STUDIES)
for study in RULE_STUDIES:

    include: f"workflow/rules/{study}.smk"


include: "workflow/rules/overview.smk"


report: "workflow/report/workflow.rst"


rule all:
    """Every output of the selected studies."""
    input:
        [path for study in config["studies"] for path in STUDY_OUTPUTS[study]],
        OVERVIEW_OUTPUTS,
    default_target: True


rule data:
    """Ingest every dataset the selected studies use (downloading its files first in download mode)."""
    input:
        list(dict.fromkeys(ingested(d) for study in config["studies"] for d in STUDY_DATASETS[study])),


rule aggregate_data:
    """Ingest every aggregate (models x benchmarks) dataset of the catalog."""
    input:
        expand("results/data/{dataset}/scores.parquet", dataset=CATALOG.names("aggregate")),


# The run's last line (benchcast.workflow.console): where the results are, or where the log of a
# failed run is.
from benchcast.workflow.console import end_of_run


onsuccess:
    end_of_run(workflow, log, ok=True)


onerror:
    end_of_run(workflow, log, ok=False)
