"""``benchcast methods``: the item-level methods ``select`` and ``estimate`` take (``--method``), with
what each needs: a shared prefit, the items' subtasks, answers in batches.

::

    benchcast methods --grep irt
"""

from __future__ import annotations

import argparse
import re

import pandas as pd

from benchcast.cli.common import add_listing, print_listing


def summary(doc: str | None, width: int = 72) -> str:
    """A docstring's first sentence as plain text, cut to ``width`` characters."""
    text = " ".join((doc or "").strip().split("\n\n")[0].split()).replace("``", "")
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text)
    text = re.split(r"\.\s+(?=[A-Z])", text)[0].rstrip(".")
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


def add_parser(sub) -> None:
    m = sub.add_parser("methods", help="list the item-level methods select / estimate take (--method)")
    add_listing(m)


def run(args: argparse.Namespace) -> int:
    from benchcast.methods import REGISTRY

    rows = []
    for name in sorted(REGISTRY):
        cls = REGISTRY[name]
        rows.append(
            (
                name,
                summary(cls.__doc__),
                cls.needs_prefit or "",
                "yes" if cls.uses_item_groups else "",
                cls.__module__.removeprefix("benchcast.methods."),
            )
        )
    columns = ["method", "what", "prefit", "subtasks", "module"]
    return print_listing(pd.DataFrame(rows, columns=columns), args)
