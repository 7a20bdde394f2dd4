# MDAD (Yauney et al., "How Reliable is Language Model Micro-Benchmarking?"): one run job per
# (dataset, method, source count) over every trial and micro-benchmark size, then the tables.
# The jobs come from benchcast.studies.mdad.jobs.

from benchcast.studies.mdad.jobs import (  # noqa: E402
    PERCENT_RUNS as MDAD_PERCENT_RUNS, REPORT_GROUP as MDAD_REPORT_GROUP, RUN_GROUP as MDAD_RUN_GROUP,
    RUNS as MDAD_RUNS, SAME_SIZE_RUNS as MDAD_SAME_SIZE_RUNS, TIMING as MDAD_TIMING,
)

MDAD_STUDY = load_study("mdad")
MDAD = MDAD_STUDY.config
MDAD_JOBS = MDAD_STUDY.jobs
MDAD_TABLES = MDAD_JOBS.tables()
MDAD_FIGURES = MDAD_JOBS.figures()
MDAD_SAME_SIZE = MDAD_JOBS.same_size_outputs()
MDAD_PERCENT = MDAD_JOBS.percent_outputs()
# the paper's published results of a dataset: the catalog entry's paper_* files
MDAD_PAPER = {
    d: {kind: catalog_file(d, f"paper_{kind}", "mdad tables") for kind in ("mdad", "estimation")}
    for d in MDAD["datasets"] if "paper_mdad" in CATALOG[d].files
}


rule mdad:
    """Every output of the study (also part of `all` when `studies` lists it)."""
    input:
        MDAD_STUDY.outputs(),


rule mdad_run:
    """Every trial of one selector at one source count, at every micro-benchmark size."""
    input:
        **dataset_tables("{dataset}"),
    output:
        estimates=MDAD_RUNS,
        timing=MDAD_TIMING,
    wildcard_constraints:
        dataset=names_regex(MDAD["datasets"]),
        method=names_regex(MDAD_JOBS.methods),
        n_source=r"\d+",
    params:
        seed=config["seed"],
        trials=MDAD["trials"],
        n_targets=MDAD["n_targets"],
        min_accuracy=MDAD["min_accuracy"],
        dedupe_models=MDAD["dedupe_models"],
        # only this selector's parameters: changing another selector does not rerun this job
        method_params=lambda w: MDAD_JOBS.methods[w.method],
        sizes=lambda w: list(MDAD_JOBS.cell(w.dataset, w.method, w.n_source).sizes),
    group: MDAD_RUN_GROUP
    resources:
        **JOB_RESOURCES.of("mdad_run"),
    log:
        "logs/mdad/run/{dataset}/{method}/n_source={n_source}.log",
    benchmark:
        "benchmarks/mdad/run/{dataset}/{method}/n_source={n_source}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/mdad/run.py"


rule mdad_tables:
    """MDAD with its intervals, agreement curves, estimation error and tau, paper vs ours."""
    input:
        runs=MDAD_JOBS.run_files(),
        timing=MDAD_JOBS.run_files(MDAD_TIMING),
        paper=[f for files in MDAD_PAPER.values() for f in files.values()],
        paper_runtime=MDAD["paper_runtime"],
    output:
        **{name: report(path, caption="../report/mdad/tables.rst", category="MDAD", subcategory="Tables")
           for name, path in MDAD_TABLES.items()},
    params:
        seed=config["seed"],
        cells=[(c.dataset, c.method, c.n_source) for c in MDAD_JOBS.cells],
        agreement=MDAD["agreement"],
        tolerance=MDAD["tolerance"],
        table3=MDAD["table3"],
        sensitivity=MDAD["sensitivity"],
        run=MDAD_STUDY.run_words(),
        selectors=MDAD_JOBS.selectors,
        paper_files=MDAD_PAPER,
    group: MDAD_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("mdad_tables"),
    log:
        "logs/mdad/tables.log",
    benchmark:
        "benchmarks/mdad/tables.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/mdad/tables.py"


rule mdad_figures:
    """Figures 1, 3/9, 4, 6/12, 7, 8, 13 and 16, and the cross-paper figure, from the tables."""
    input:
        mdad=MDAD_TABLES["mdad"],
        agreement=MDAD_TABLES["agreement"],
        estimation=MDAD_TABLES["estimation"],
        sensitivity=MDAD_TABLES["sensitivity"],
        cross_paper=MDAD_TABLES["cross_paper"],
        cross_paper_summary=MDAD_TABLES["cross_paper_summary"],
    output:
        **{name: report(path, caption="../report/mdad/figures.rst", category="MDAD", subcategory="Figures")
           for name, path in MDAD_FIGURES.items()},
    params:
        figures=MDAD["figures"],
        selectors=MDAD_JOBS.selectors,
    group: MDAD_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("mdad_figures"),
    log:
        "logs/mdad/figures.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/mdad/figures.py"


rule mdad_same_size_run:
    """Every trial of one selector with a fixed group of target models (Section 5.3)."""
    input:
        **dataset_tables("{dataset}"),
    output:
        MDAD_SAME_SIZE_RUNS,
    wildcard_constraints:
        dataset=names_regex(MDAD["datasets"]),
        group=names_regex(MDAD["same_size"]["groups"]),
        method=names_regex(MDAD_JOBS.methods),
    params:
        seed=config["seed"],
        trials=MDAD["trials"],
        min_accuracy=MDAD["min_accuracy"],
        group=lambda w: MDAD["same_size"]["groups"][w.group],
        n_source=MDAD["same_size"]["n_source"],
        sizes=MDAD["same_size"]["sizes"],
        method_params=lambda w: MDAD_JOBS.methods[w.method],
    group: MDAD_RUN_GROUP
    resources:
        **JOB_RESOURCES.of("mdad_same_size_run"),
    log:
        "logs/mdad/same_size/{dataset}/{group}/{method}.log",
    benchmark:
        "benchmarks/mdad/same_size/{dataset}/{group}/{method}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/mdad/same_size_run.py"


rule mdad_same_size:
    """Figure 5 / Appendix L: MDAD of each group and the share of its pairs below it."""
    input:
        runs=[MDAD_SAME_SIZE_RUNS.format(dataset=d, group=g, method=m) for d, g, m in MDAD_JOBS.same_size_cells()],
    output:
        table=report(MDAD_SAME_SIZE.get("table", "results/tables/mdad/same_size.csv"), caption="../report/mdad/tables.rst",
                     category="MDAD", subcategory="Tables"),
        figure=report(MDAD_SAME_SIZE.get("figure", "results/figures/mdad/figure5.png"),
                      caption="../report/mdad/figures.rst", category="MDAD", subcategory="Figures"),
    params:
        seed=config["seed"],
        cells=MDAD_JOBS.same_size_cells(),
        agreement=MDAD["agreement"],
    group: MDAD_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("mdad_tables"),
    log:
        "logs/mdad/same_size.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/mdad/same_size.py"


rule mdad_percent_run:
    """Every trial of one selector at fixed percentages of the seen half (Appendix G): of the whole
    half (scope benchmark) or of each subtask's, every subtask its own benchmark (scope subtask)."""
    input:
        **dataset_tables("{dataset}"),
    output:
        MDAD_PERCENT_RUNS,
    wildcard_constraints:
        scope="benchmark|subtask",
        dataset=names_regex(MDAD["datasets"]),
        method=names_regex(MDAD_JOBS.selectors),
        n_source=r"\d+",
    params:
        seed=config["seed"],
        n_targets=MDAD["n_targets"],
        min_accuracy=MDAD["min_accuracy"],
        dedupe_models=MDAD["dedupe_models"],
        fractions=lambda w: MDAD_JOBS.percent_scope(w.scope)["fractions"],
        trials=lambda w: MDAD_JOBS.percent_scope(w.scope)["trials"],
        method_params=lambda w: MDAD_JOBS.methods[w.method],
    group: MDAD_RUN_GROUP
    resources:
        **JOB_RESOURCES.of("mdad_percent_run"),
    log:
        "logs/mdad/percent/{scope}/{dataset}/{method}/n_source={n_source}.log",
    benchmark:
        "benchmarks/mdad/percent/{scope}/{dataset}/{method}/n_source={n_source}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/mdad/percent_run.py"


rule mdad_percent:
    """Figures 10 and 17: error, tau and MDAD against the fraction selected."""
    input:
        runs=[MDAD_PERCENT_RUNS.format(scope=s, dataset=d, method=m, n_source=n) for s, d, m, n in MDAD_JOBS.percent_cells()],
    output:
        table=report(MDAD_PERCENT.get("table", "results/tables/mdad/percent.csv"), caption="../report/mdad/tables.rst",
                     category="MDAD", subcategory="Tables"),
        figure10=report(MDAD_PERCENT.get("figure10", "results/figures/mdad/figure10.png"),
                        caption="../report/mdad/figures.rst", category="MDAD", subcategory="Figures"),
        figure17=report(MDAD_PERCENT.get("figure17", "results/figures/mdad/figure17.png"),
                        caption="../report/mdad/figures.rst", category="MDAD", subcategory="Figures"),
    params:
        seed=config["seed"],
        cells=MDAD_JOBS.percent_cells(),
        agreement=MDAD["agreement"],
        selectors=MDAD_JOBS.selectors,
    group: MDAD_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("mdad_tables"),
    log:
        "logs/mdad/percent.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/mdad/percent.py"
