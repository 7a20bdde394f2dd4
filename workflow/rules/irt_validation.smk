# IRT validation: our MIRT-2PL MAP fit (benchcast.irt) vs py-irt's multidim_2pl, on held-out cells.
# Not part of `all`: py-irt lives in its own venv (bash scripts/dev/setup_pyirt_env.sh), then
#   snakemake --cores 2 irt_validation

IRTV = config["irt_validation"]
IRTV_DIR = "results/irt_validation/{dataset}"


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
    log:
        "logs/irt_validation/{dataset}/mask.log",
    script:
        "../scripts/irtv_mask.py"


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
        irt=lambda w: {**mtm_irt_fit_params("interpolation"), "dims": IRTV["dims"]},   # the fitter P-IRT uses in interpolation
        seed=config["seed"],
    log:
        "logs/irt_validation/{dataset}/benchcast.log",
    benchmark:
        "benchmarks/irt_validation/{dataset}/benchcast.tsv"
    script:
        "../scripts/irtv_ours.py"


rule irtv_pyirt:
    """py-irt 0.7.1 on the same training cells, in its own venv (one torch/BLAS thread), timed."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        mask=f"{IRTV_DIR}/mask.npy",
        script=f"{workflow.basedir}/workflow/scripts/irt_validation_pyirt.py",
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
    log:
        "logs/irt_validation/{dataset}/pyirt_{variant}.log",
    benchmark:
        "benchmarks/irt_validation/{dataset}/pyirt_{variant}.tsv"
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
    """The report: held-out log-likelihood, parameter agreement and fit time, ours vs py-irt."""
    input:
        ours=expand(f"{IRTV_DIR}/benchcast.npz", dataset=IRTV["datasets"]),
        pyirt=expand(f"{IRTV_DIR}/pyirt_{{variant}}.npz", dataset=IRTV["datasets"], variant=IRTV["variants"]),
        masks=expand(f"{IRTV_DIR}/mask.npy", dataset=IRTV["datasets"]),
        models=expand("results/data/{dataset}/models.parquet", dataset=IRTV["datasets"]),
        responses=expand("results/data/{dataset}/responses.parquet", dataset=IRTV["datasets"]),
        item_tables=expand("results/data/{dataset}/items.parquet", dataset=IRTV["datasets"]),
    output:
        fits="results/tables/irt_validation/fits.csv",
        comparison="results/tables/irt_validation/comparison.csv",
        report=report("results/tables/irt_validation/report.md", caption="../report/irt_validation.rst",
                      category="Misses the mark", subcategory="IRT validation"),
    params:
        datasets=IRTV["datasets"],
        variants=IRTV["variants"],
        settings=IRTV,
    log:
        "logs/irt_validation/report.log",
    script:
        "../scripts/irtv_report.py"
