# The toy study (docs/examples/minimal_study): each model's accuracy from its first n items.

TOY_STUDY = load_study("toy")
TOY = TOY_STUDY.config


rule toy:
    """Every output of the study."""
    input:
        TOY_STUDY.outputs(),


rule toy_run:
    """Each model's accuracy estimated from its first n items."""
    input:
        **dataset_tables("{dataset}"),
    output:
        "results/runs/toy/{dataset}/n={n}.csv",
    group:
        "toy_runs"
    log:
        "logs/toy/{dataset}/n={n}.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/toy/run.py"


rule toy_table:
    """Mean absolute error per budget, against the made-up paper value."""
    input:
        TOY_STUDY.runs(),
    output:
        report("results/tables/toy/paper_vs_ours.csv", caption="../report/toy/table.rst", category="Toy"),
    params:
        paper=TOY["paper_mae"],
        tolerance=TOY["tolerance"],
    log:
        "logs/toy/table.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/toy/table.py"
