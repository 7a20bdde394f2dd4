# IRT validation: our MIRT-2PL fit (benchcast.irt) vs py-irt's multidim_2pl, on held-out cells.
# py-irt lives in its own venv (bash scripts/dev/setup_pyirt_env.sh), so the study is not in the
# default `studies`:  snakemake irt_validation --cores 2 --config 'studies=[irt_validation]'

from benchcast.methods.irt_methods import check_fit_params  # noqa: E402

IRTV_STUDY = load_study("irt_validation")
IRTV = IRTV_STUDY.config
IRTV_FIT = check_fit_params({**IRTV["fit"], "dims": IRTV["dims"]})
IRTV_DIR = "results/irt_validation/{dataset}"
# py-irt pins pandas<3: its rule has an environment of its own (under --sdm conda set pyirt_python: python)
PYIRT_ENV = "../envs/pyirt.yaml"
IRTV_OUTPUTS = IRTV_STUDY.outputs()


rule irtv_mask:
    """The held-out cells (a fixed random share of the matrix) both fitters must not see."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        item_table="results/data/{dataset}/items.parquet",
    output:
        f"{IRTV_DIR}/mask.npy",
    params:
        fraction=IRTV["heldout_fraction"],
        seed=config["seed"],
    resources:
        **JOB_RESOURCES.of("irtv_mask"),
    log:
        "logs/irt_validation/{dataset}/mask.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/irt_validation/mask.py"


rule irtv_ours:
    """Our fit on the training cells (one BLAS thread), timed."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        item_table="results/data/{dataset}/items.parquet",
        mask=f"{IRTV_DIR}/mask.npy",
    output:
        f"{IRTV_DIR}/benchcast.npz",
    params:
        irt=IRTV_FIT,
        seed=config["seed"],
    resources:
        **JOB_RESOURCES.of("irtv_ours"),
    log:
        "logs/irt_validation/{dataset}/benchcast.log",
    benchmark:
        "benchmarks/irt_validation/{dataset}/benchcast.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/irt_validation/ours.py"


rule irtv_pyirt:
    """py-irt 0.7.1 on the same training cells, in its own venv (one torch/BLAS thread), timed."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        mask=f"{IRTV_DIR}/mask.npy",
        script=f"{workflow.basedir}/workflow/scripts/irt_validation/pyirt_fit.py",
    output:
        f"{IRTV_DIR}/pyirt_{{variant}}.npz",
    wildcard_constraints:
        variant="pyirt|paper",
    params:
        python=IRTV["pyirt_python"],
        epochs=IRTV["epochs"],
        lr=IRTV["lr"],
        dims=IRTV["dims"],
        seed=config["seed"],
    resources:
        **JOB_RESOURCES.of("irtv_pyirt"),
    log:
        "logs/irt_validation/{dataset}/pyirt_{variant}.log",
    benchmark:
        "benchmarks/irt_validation/{dataset}/pyirt_{variant}.tsv"
    conda:
        PYIRT_ENV
    shell:
        """
        if [ ! -x {params.python} ]; then
            echo "py-irt's venv {params.python} is missing; fix: bash scripts/dev/setup_pyirt_env.sh" > {log}; exit 1
        fi
        {params.python} {input.script} --responses {input.responses} --models {input.models} --mask {input.mask} \
            --out {output} --epochs {params.epochs} --dims {params.dims} --lr {params.lr} --seed {params.seed} \
            --threads 1 --variant {wildcards.variant} > {log} 2>&1
        """


rule irt_validation:
    """The summary: held-out log-likelihood, parameter agreement and fit time, ours vs py-irt."""
    input:
        ours=expand(f"{IRTV_DIR}/benchcast.npz", dataset=IRTV["datasets"]),
        pyirt=expand(f"{IRTV_DIR}/pyirt_{{variant}}.npz", dataset=IRTV["datasets"], variant=IRTV["variants"]),
        masks=expand(f"{IRTV_DIR}/mask.npy", dataset=IRTV["datasets"]),
        models=expand("results/data/{dataset}/models.parquet", dataset=IRTV["datasets"]),
        responses=expand("results/data/{dataset}/responses.parquet", dataset=IRTV["datasets"]),
        item_tables=expand("results/data/{dataset}/items.parquet", dataset=IRTV["datasets"]),
    output:
        fits=IRTV_OUTPUTS[0],
        comparison=IRTV_OUTPUTS[1],
        summary=report(IRTV_OUTPUTS[2], caption="../report/irt_validation/summary.rst",
                      category="IRT validation"),
    params:
        datasets=IRTV["datasets"],
        variants=IRTV["variants"],
        settings=IRTV,
    resources:
        **JOB_RESOURCES.of("irt_validation"),
    log:
        "logs/irt_validation/summary.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/irt_validation/summary.py"
