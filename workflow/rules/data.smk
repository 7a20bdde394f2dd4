# Shared by every study: raw files (downloaded in download mode) -> validated Parquet tables.


rule download_raw:
    """Fetch one raw file from url_template into resources/raw and verify its sha256.

    Used only when raw_dir is resources/raw; a mirror such as ../shared/raw needs no download.
    The wildcards take only the catalog's sources and paths, so a file in a subfolder
    (data/scores/x.jbl) is matched as source + path, never with the subfolder in the source.
    """
    output:
        "resources/raw/{source}/{path}",
    params:
        catalog=config["catalog"],
        url_template=lambda w: URL_TEMPLATE,  # a function: its {fields} are not wildcards
    resources:
        **JOB_RESOURCES.of("download_raw"),
    log:
        "logs/download/{source}/{path}.log",
    benchmark:
        "benchmarks/download/{source}/{path}.tsv"
    wildcard_constraints:
        source=names_regex(DOWNLOAD_SOURCES),
        path=names_regex(DOWNLOAD_PATHS),
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/data/download_raw.py"


rule ingest_item_dataset:
    """Read an item-level dump (jbl / npy), validate it, write responses/models/items Parquet."""
    input:
        unpack(raw_inputs),
    wildcard_constraints:
        dataset=names_regex(CATALOG.names("item_binary")),
    output:
        responses="results/data/{dataset}/responses.parquet",
        models="results/data/{dataset}/models.parquet",
        item_table="results/data/{dataset}/items.parquet",
    params:
        catalog=config["catalog"],
        # the dataset's own catalog entry: editing another entry does not rerun this one
        spec=lambda w: catalog_entry(w.dataset),
    resources:
        **JOB_RESOURCES.of("ingest_item_dataset"),
    log:
        "logs/ingest/{dataset}.log",
    benchmark:
        "benchmarks/ingest/{dataset}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/data/ingest_item_dataset.py"


rule ingest_aggregate_dataset:
    """Read a models x benchmarks dump (BenchPress, llm-benchmark-matrix, sloth) into Parquet."""
    input:
        unpack(raw_inputs),
    wildcard_constraints:
        dataset=names_regex(CATALOG.names("aggregate")),
    output:
        models="results/data/{dataset}/models.parquet",
        benchmarks="results/data/{dataset}/benchmarks.parquet",
        scores="results/data/{dataset}/scores.parquet",
    params:
        catalog=config["catalog"],
        spec=lambda w: catalog_entry(w.dataset),
    resources:
        **JOB_RESOURCES.of("ingest_aggregate_dataset"),
    log:
        "logs/ingest/{dataset}.log",
    benchmark:
        "benchmarks/ingest/{dataset}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/data/ingest_aggregate_dataset.py"
