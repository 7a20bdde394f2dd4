# For a user with a new model: the stored fits `benchcast select` / `benchcast estimate` read, one
# per (dataset, method, budget), and the held-out test of the intervals the tools print. The jobs come
# from benchcast.studies.heldout_intervals.jobs; the tools are benchcast.new_model.

from benchcast.studies.heldout_intervals.jobs import (  # noqa: E402
    CLI_SECONDS as HI_CLI_SECONDS, FIT as HI_FIT, HELDOUT as HI_HELDOUT,
    HELDOUT_TIMING as HI_HELDOUT_TIMING, HELDOUT_PAIRS as HI_HELDOUT_PAIRS,
    HELDOUT_CALIBRATION_PAIRS as HI_HELDOUT_CALIBRATION_PAIRS, HELDOUT_CALIBRATION as HI_HELDOUT_CALIBRATION,
)

HI_STUDY = load_study("heldout_intervals")
HI = HI_STUDY.config
HI_JOBS = HI_STUDY.jobs
HI_TABLES = HI_JOBS.tables()


rule heldout_intervals:
    """Every stored fit and the held-out test's tables (also part of `all` when `studies` lists it)."""
    input:
        HI_STUDY.outputs(),


rule hi_fit:
    """One method fitted on every model of a dataset, with its calibration; then the command line's
    own wall time on it."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        item_table="results/data/{dataset}/items.parquet",
    output:
        fit=HI_FIT,
        arrays="results/models/{dataset}/{method}/n={budget}/arrays.parquet",
        calibration="results/models/{dataset}/{method}/n={budget}/calibration.parquet",
        pairs="results/models/{dataset}/{method}/n={budget}/pairs.parquet",
        cli=HI_CLI_SECONDS,
    wildcard_constraints:
        dataset=names_regex(HI["datasets"]),
        method=names_regex(HI_JOBS.methods),
        budget=r"\d+",
    params:
        seed=config["seed"],
        folds=HI["folds"],
        # only this method's settings: changing another method does not rerun this job
        method_params=lambda w: HI_JOBS.methods[w.method],
    resources:
        **JOB_RESOURCES.of("hi_fit"),
    log:
        "logs/heldout_intervals/fit/{dataset}/{method}/n={budget}.log",
    benchmark:
        "benchmarks/heldout_intervals/fit/{dataset}/{method}/n={budget}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/heldout_intervals/fit.py"


rule hi_test:
    """Every model of a dataset as a new model once, against a fit on the other folds of models."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        item_table="results/data/{dataset}/items.parquet",
    output:
        rows=HI_HELDOUT,
        timing=HI_HELDOUT_TIMING,
        pairs=HI_HELDOUT_PAIRS,
        calibration_pairs=HI_HELDOUT_CALIBRATION_PAIRS,
        calibration=HI_HELDOUT_CALIBRATION,
    wildcard_constraints:
        dataset=names_regex(HI["datasets"]),
        method=names_regex(HI_JOBS.methods),
        budget=r"\d+",
    params:
        seed=config["seed"],
        folds=HI["folds"],
        heldout_folds=HI["heldout_folds"],
        level=HI["level"],
        method_params=lambda w: HI_JOBS.methods[w.method],
    resources:
        **JOB_RESOURCES.of("hi_test"),
    log:
        "logs/heldout_intervals/heldout/{dataset}/{method}/n={budget}.log",
    benchmark:
        "benchmarks/heldout_intervals/heldout/{dataset}/{method}/n={budget}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/heldout_intervals/heldout.py"


rule hi_tables:
    """Coverage, width and error of the held-out test; the command line's seconds."""
    input:
        heldout=HI_JOBS.paths(HI_HELDOUT),
        timing=HI_JOBS.paths(HI_HELDOUT_TIMING),
        pairs=HI_JOBS.paths(HI_HELDOUT_PAIRS),
        calibration=HI_JOBS.paths(HI_HELDOUT_CALIBRATION),
        cli=HI_JOBS.paths(HI_CLI_SECONDS),
    output:
        **{name: report(path, caption="../report/heldout_intervals/tables.rst", category="New-model tools")
           for name, path in HI_TABLES.items()},
    params:
        cells=[(c.dataset, c.method, c.budget) for c in HI_JOBS.cells],
        level=HI["level"],
        seed=config["seed"],
    resources:
        **JOB_RESOURCES.of("hi_tables"),
    log:
        "logs/heldout_intervals/tables.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/heldout_intervals/tables.py"
