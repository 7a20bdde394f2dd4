"""Write each study page's "Full run" section from the shipped expected run of every paper.

    python scripts/full_run_pages.py            # rewrite docs/studies/<study>.md's section
    python scripts/full_run_pages.py --check    # exit 1 naming the pages that are not current

The logic: :mod:`benchcast.verify.full_run`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchcast.data.io import write_text_atomic
from benchcast.verify.expected import EXPECTED_DIR
from benchcast.verify.full_run import GROUPS, render, section

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page is not current")
    parser.add_argument("--run", default="all_papers", help="the expected run (default all_papers)")
    args = parser.parse_args(argv)
    expected = REPO / EXPECTED_DIR / args.run
    stale = []
    for study in GROUPS:
        path = REPO / "docs" / "studies" / f"{study}.md"
        page = path.read_text(encoding="utf-8")
        new = render(page, section(expected, study))
        if new != page:
            stale.append(path.relative_to(REPO))
            if not args.check:
                write_text_atomic(path, new)
    for path in stale:
        print(f"{'not current' if args.check else 'written'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
