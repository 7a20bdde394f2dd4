"""One item-level dataset from its pinned raw files to the validated Parquet tables, without
Snakemake: what ``benchcast fetch DATASET`` does for a user with an installed benchcast.

The raw files come from a mirror folder (``raw_dir``, laid out as ``<source>/<path>`` like
``../shared/raw``) or are downloaded from the catalog's ``url_template`` into
``<data_dir>/raw/<source>/<path>`` (kept: a second fetch reads them). Either way every file the
catalog pins a sha256 for is verified before it is read, and the tables are the workflow's
ingest's (:func:`benchcast.data.item_level.build_tables`, :func:`~benchcast.data.item_level.write_tables`),
written to ``<data_dir>/data/<dataset>/`` with ``responses.parquet`` last: its presence means the
dataset is whole, as ``select`` / ``estimate`` read it.
"""

from __future__ import annotations

from pathlib import Path

from benchcast.data.catalog import Catalog
from benchcast.data.download import download
from benchcast.data.item_level import HarnessReader, build_tables, write_tables
from benchcast.data.raw_files import verify_checksums
from benchcast.errors import ConfigError, DataError

#: the tables of an ingested dataset, in the order they are written (``responses`` last)
TABLES = ("models", "items", "responses")


def fetch_fix(dataset: str) -> str:
    """The two ways to get a dataset's files when the network does not give them."""
    return (
        f"pass --raw-dir a folder that holds the raw files (a mirror laid out like ../shared/raw), or "
        f"--url-template a copy you can reach (e.g. 'https://host/path/{{source}}/{{path}}'); `benchcast fetch "
        f"{dataset} --help` says more"
    )


def dataset_folder(data_dir: str | Path, dataset: str) -> Path:
    return Path(data_dir) / "data" / dataset


def fetch_dataset(
    catalog: Catalog,
    dataset: str,
    data_dir: str | Path,
    raw_dir: str | Path | None = None,
    url_template: str | None = None,
    log=print,
    harness_reader: HarnessReader | None = None,
) -> Path:
    """``dataset``'s raw files (mirror or download), verified and ingested into
    ``<data_dir>/data/<dataset>/``; returns that folder. ``harness_reader`` reads a dataset of harness
    logs (:func:`benchcast.data.item_level.read_raw_item_matrix`; ``benchcast fetch`` passes it)."""
    spec = catalog[dataset]
    if spec.kind != "item_binary":
        raise ConfigError(
            f"{dataset!r} is of kind {spec.kind}; benchcast fetch takes the item-level ones select, estimate and "
            f"plan read ({', '.join(catalog.names('item_binary'))}). Fix: ingest it with the workflow "
            f"(snakemake results/data/{dataset}/scores.parquet in a clone)"
        )
    if raw_dir is not None and not Path(raw_dir).is_dir():
        raise DataError(
            raw_dir, "--raw-dir", "is not a folder", "point --raw-dir at a mirror laid out as <source>/<path>"
        )
    files = {}
    for role, f in spec.files.items():
        if f.in_repo:  # a file kept with the catalog in a clone (a table transcribed from a paper)
            path = catalog.local_path(dataset, role, raw_dir or ".")
            if not path.exists():
                raise DataError(
                    path,
                    f"files.{role}",
                    f"dataset {dataset!r} needs a file kept in benchcast's repository, which this installation lacks",
                    "fetch it in a clone of the repository (the workflow ingests it)",
                )
        elif raw_dir is not None:
            path = spec.local_path(raw_dir, role)
            if not path.exists():
                raise DataError(
                    path,
                    f"files.{role}",
                    f"the mirror {raw_dir} has no file {f.source}/{f.path} of dataset {dataset!r}",
                    "point --raw-dir at a folder laid out as <source>/<path> that has it, or leave --raw-dir out "
                    "to download it",
                )
        else:  # downloaded once into <data_dir>/raw/
            path = Path(data_dir) / "raw" / f.source / f.path
            if not path.exists():
                template = url_template or catalog.url_template
                download(spec.url(role, template), path, f.sha256, log=log, fix=fetch_fix(dataset))
        files[role] = path
    verify_checksums(spec, files, log=log)
    tables = build_tables(spec, files, log=log, harness_reader=harness_reader)
    out = dataset_folder(data_dir, dataset)
    (out / "responses.parquet").unlink(missing_ok=True)  # a dataset being replaced is none until whole
    write_tables({name: tables[name] for name in TABLES}, {name: out / f"{name}.parquet" for name in TABLES})
    return out
