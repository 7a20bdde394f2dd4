"""``benchcast fetch DATASET``: one item-level dataset of the catalog, downloaded (or read from a
mirror folder), verified against its pinned sha256 and ingested into the data folder that
``select``, ``estimate`` and ``plan`` read -- no clone of the repository, no Snakemake
(:mod:`benchcast.data.fetch`).

::

    benchcast fetch musr                              # download into the per-user cache
    benchcast fetch musr --raw-dir ../shared/raw      # from a mirror laid out as <source>/<path>
    benchcast select musr --method random_sampling --budget 50 --out items.csv
"""

from __future__ import annotations

import argparse

from benchcast.cli.common import add_data_dir, log
from benchcast.data.catalog import DEFAULT_CATALOG


def add_parser(sub) -> None:
    f = sub.add_parser(
        "fetch", help="download (or read from a mirror), verify and ingest one item-level dataset, without Snakemake"
    )
    f.add_argument("dataset", help="an item-level dataset of the catalog (benchcast datasets lists them)")
    add_data_dir(f)
    f.add_argument(
        "--raw-dir",
        help="a folder that already holds the raw files, laid out as <source>/<path> like ../shared/raw "
        "(default: download them into <data-dir>/raw)",
    )
    f.add_argument(
        "--url-template",
        help="where to download from: {repository}, {commit}, {path}, {source} filled in per file "
        "(default: the catalog's public URL)",
    )
    f.add_argument("--force", action="store_true", help="ingest again even when the dataset is already there")
    f.add_argument(
        "--catalog", default=DEFAULT_CATALOG, help="a dataset catalog (default: the one shipped with benchcast)"
    )


def run(args: argparse.Namespace) -> int:
    from benchcast.data.catalog import load_catalog
    from benchcast.data.fetch import dataset_folder, fetch_dataset
    from benchcast.errors import ConfigError, did_you_mean
    from benchcast.lm_eval.board import read_logs_dataset

    catalog = load_catalog(args.catalog)
    if args.dataset not in catalog.datasets:
        known = catalog.names("item_binary")
        raise ConfigError(
            f"unknown dataset {args.dataset!r}{did_you_mean(args.dataset, known) or '.'} Fix: use a name "
            "`benchcast datasets` lists"
        )
    folder = dataset_folder(args.data_dir, args.dataset)
    if (folder / "responses.parquet").is_file() and not args.force:
        print(f"{args.dataset} is already in {folder} (--force ingests it again)")
        return 0
    folder = fetch_dataset(
        catalog, args.dataset, args.data_dir, args.raw_dir, args.url_template, log=log, harness_reader=read_logs_dataset
    )
    from benchcast.new_model.leaderboard import load_leaderboard

    board = load_leaderboard(args.dataset, args.data_dir)
    models, items = board.matrix.shape
    print(
        f"{args.dataset}: {models} models x {items} items in {folder}. Next:\n"
        f"  benchcast select {args.dataset} --method random_sampling --budget 50 --out items.csv"
        + ("" if not args.data_dir_given else f" --data-dir {args.data_dir}")
    )
    return 0
