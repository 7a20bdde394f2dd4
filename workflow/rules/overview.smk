# Across studies: results/index.md (each paper's sections -> this run's outputs, and the share of the
# paper's numbers reproduced within tolerance) and results/tables/performance.{csv,md} (what the run
# cost, from every job's benchmark file, with the papers' own published costs). Part of `all`.

from benchcast.workflow.paper_index import index_inputs  # noqa: E402

INDEXED_STUDIES = [s for s in config["studies"] if s in STUDY_INDEX]
OVERVIEW_OUTPUTS = ["results/index.md", "results/tables/performance.csv"]


rule index:
    """results/index.md: every selected study's paper sections linked to their outputs."""
    input:
        index_inputs(INDEXED_STUDIES, STUDY_INDEX),
    output:
        index=report("results/index.md", caption="../report/overview/index.rst", category="Index"),
    params:
        studies=INDEXED_STUDIES,
        entries={s: STUDY_INDEX[s] for s in INDEXED_STUDIES},
    log:
        "logs/overview/index.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/overview/index.py"


rule performance:
    """results/tables/performance.csv: per study and method, jobs, job-seconds, peak memory; per study
    the critical path and the projected wall time on 8/32/128 cores (benchcast.workflow.performance). Measured
    times: it is excepted from byte-identity checks like Table 2."""
    input:
        [path for study in config["studies"] for path in STUDY_OUTPUTS[study]],
    output:
        csv="results/tables/performance.csv",
        md=report("results/tables/performance.md", caption="../report/overview/performance.rst", category="Index"),
    params:
        config=config,
        cores=[8, 32, 128],
        costs={s: STUDY_COSTS.get(s, {}) for s in config["studies"]},
    log:
        "logs/overview/performance.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/overview/performance.py"
