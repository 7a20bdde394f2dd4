"""``benchcast datasets``: the item-level datasets ``select``, ``estimate`` and ``plan`` take by name
(the catalog's 0/1 response matrices: models, items, subtasks), whether each is ingested under
``--data-dir``, and its lm-evaluation-harness identity (verified / assumed / none: whether
``--format lm-eval`` works).

::

    benchcast datasets --grep musr
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from benchcast.cli.common import add_data_dir, add_listing, print_listing
from benchcast.data.catalog import DEFAULT_CATALOG


def add_parser(sub) -> None:
    d = sub.add_parser(
        "datasets",
        help="list the item-level datasets select / estimate / plan take by name: models, items, subtasks, "
        "ingested or not, lm-evaluation-harness identity",
    )
    add_data_dir(d)
    d.add_argument(
        "--catalog", default=DEFAULT_CATALOG, help="a dataset catalog (default: the one shipped with benchcast)"
    )
    add_listing(d)


def run(args: argparse.Namespace) -> int:
    from benchcast.data.catalog import load_catalog
    from benchcast.data.harness_identity import parse_block

    catalog = load_catalog(args.catalog)
    rows = []
    for name in catalog.names("item_binary"):
        spec = catalog[name]
        ingested = (Path(args.data_dir) / "data" / name / "responses.parquet").is_file()
        harness = parse_block(name, spec.extra.get("lm_eval"), args.catalog)["identity"]
        subtasks = max(1, len(spec.subtasks))  # the catalog lists a benchmark's subtasks (none: one)
        rows.append(
            (name, spec.title, spec.suite, spec.n_models, spec.n_items, subtasks, "yes" if ingested else "no", harness)
        )
    columns = ["dataset", "title", "suite", "models", "items", "subtasks", "ingested", "lm_eval"]
    table = pd.DataFrame(rows, columns=columns)
    for c in ("models", "items"):  # whole numbers, blank where the catalog does not say
        table[c] = table[c].astype("Int64")
    return print_listing(table, args)
