# For a user with a new model: the deployable fits `benchcast select` / `benchcast estimate` read, one
# per (dataset, method, budget), and the held-out test of the intervals the tools print. The jobs come
# from benchcast.studies.deploy.jobs; the tools are benchcast.new_model.

from benchcast.studies.deploy.jobs import (  # noqa: E402
    CLI_SECONDS as DEPLOY_CLI_SECONDS, FIT as DEPLOY_FIT, HELDOUT as DEPLOY_HELDOUT,
    HELDOUT_TIMING as DEPLOY_HELDOUT_TIMING,
)

DEPLOY_STUDY = load_study("deploy")
DEPLOY = DEPLOY_STUDY.config
DEPLOY_JOBS = DEPLOY_STUDY.jobs
DEPLOY_TABLES = DEPLOY_JOBS.tables()


rule deploy:
    """Every deployable fit and the held-out test's tables (also part of `all` when `studies` lists it)."""
    input:
        DEPLOY_STUDY.outputs(),


rule deploy_fit:
    """One method fitted on every model of a dataset, with its calibration; then the command line's
    own wall time on it."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        item_table="results/data/{dataset}/items.parquet",
    output:
        fit=DEPLOY_FIT,
        arrays="results/models/{dataset}/{method}/n={budget}/arrays.parquet",
        calibration="results/models/{dataset}/{method}/n={budget}/calibration.parquet",
        cli=DEPLOY_CLI_SECONDS,
    wildcard_constraints:
        dataset=names_regex(DEPLOY["datasets"]),
        method=names_regex(DEPLOY_JOBS.methods),
        budget=r"\d+",
    params:
        seed=config["seed"],
        folds=DEPLOY["folds"],
        # only this method's settings: changing another method does not rerun this job
        method_params=lambda w: DEPLOY_JOBS.methods[w.method],
    resources:
        **JOB_RESOURCES.of("deploy_fit"),
    log:
        "logs/deploy/fit/{dataset}/{method}/n={budget}.log",
    benchmark:
        "benchmarks/deploy/fit/{dataset}/{method}/n={budget}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/deploy/fit.py"


rule deploy_heldout:
    """Every model of a dataset as a new model once, against a fit on the other folds of models."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        item_table="results/data/{dataset}/items.parquet",
    output:
        rows=DEPLOY_HELDOUT,
        timing=DEPLOY_HELDOUT_TIMING,
    wildcard_constraints:
        dataset=names_regex(DEPLOY["datasets"]),
        method=names_regex(DEPLOY_JOBS.methods),
        budget=r"\d+",
    params:
        seed=config["seed"],
        folds=DEPLOY["folds"],
        heldout_folds=DEPLOY["heldout_folds"],
        level=DEPLOY["level"],
        method_params=lambda w: DEPLOY_JOBS.methods[w.method],
    resources:
        **JOB_RESOURCES.of("deploy_heldout"),
    log:
        "logs/deploy/heldout/{dataset}/{method}/n={budget}.log",
    benchmark:
        "benchmarks/deploy/heldout/{dataset}/{method}/n={budget}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/deploy/heldout.py"


rule deploy_tables:
    """Coverage, width and error of the held-out test; the command line's seconds."""
    input:
        heldout=DEPLOY_JOBS.paths(DEPLOY_HELDOUT),
        timing=DEPLOY_JOBS.paths(DEPLOY_HELDOUT_TIMING),
        cli=DEPLOY_JOBS.paths(DEPLOY_CLI_SECONDS),
    output:
        **{name: report(path, caption="../report/deploy/tables.rst", category="New-model tools")
           for name, path in DEPLOY_TABLES.items()},
    params:
        cells=[(c.dataset, c.method, c.budget) for c in DEPLOY_JOBS.cells],
        level=DEPLOY["level"],
    resources:
        **JOB_RESOURCES.of("deploy_tables"),
    log:
        "logs/deploy/tables.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/deploy/tables.py"
