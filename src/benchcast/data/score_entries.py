"""A user's scores keyed by an id, from a CSV (``<key>,score`` header) or a JSON file (an object
``{id: score}`` or a list of ``{"<key>": ..., "score": ...}`` records): ``benchcast complete``'s
known benchmark scores and ``benchcast estimate``'s item answers. Entries come back as
``(id, raw score, where, extras)`` -- ``where`` names the line or entry for error messages, and
``extras`` holds the optional ``extra`` columns -- and the caller checks ids and values."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from benchcast.data.io import check_separator, read_text
from benchcast.errors import DataError


def _no_duplicate_keys(pairs, path, noun):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise DataError(path, k, "is given twice", f"give each {noun} once")
        seen[k] = v
    return seen


def read_score_entries(
    path: str | Path, key: str, noun: str, extra: tuple[str, ...] = ()
) -> list[tuple[str, object, str, dict]]:
    """The entries of ``path`` (module docstring); ``noun`` names what an id is, in messages."""
    path = Path(path)
    if not path.exists():
        raise DataError(path, "(file)", "does not exist", f"pass the path of your CSV ({key},score) or JSON file")
    if path.is_dir():
        raise DataError(path, "(file)", "is a folder", f"pass the path of your CSV ({key},score) or JSON file")
    text = read_text(path, f"pass your CSV ({key},score) or JSON file (UTF-8 text)")
    if path.suffix.lower() == ".json":
        try:
            doc = json.loads(text, object_pairs_hook=lambda pairs: _no_duplicate_keys(pairs, path, noun))
        except json.JSONDecodeError as exc:
            raise DataError(path, f"(JSON line {exc.lineno})", exc.msg, "fix the JSON syntax") from None
        if isinstance(doc, dict):
            return [(str(k), v, f"key {k!r}", {}) for k, v in doc.items()]
        if isinstance(doc, list):
            out = []
            for n, rec in enumerate(doc):
                if not isinstance(rec, dict) or key not in rec or "score" not in rec:
                    raise DataError(
                        path,
                        f"[{n}]",
                        f"is not an object with '{key}' and 'score'",
                        f'write each entry as {{"{key}": "...", "score": 1}}',
                    )
                out.append((str(rec[key]), rec["score"], f"entry [{n}]", {c: rec[c] for c in extra if c in rec}))
            return out
        raise DataError(
            path,
            "(top level)",
            f"expected an object or a list, got {type(doc).__name__}",
            f'write {{"{key}": score, ...}}',
        )
    rows = list(csv.reader(text.splitlines()))
    while rows and not any(c.strip() for c in rows[-1]):
        rows.pop()
    if not rows:
        raise DataError(path, "(header)", "the file is empty", f"write a CSV with header {key},score")
    header = [c.strip() for c in rows[0]]
    check_separator(path, header)
    missing = [c for c in (key, "score") if c not in header]
    if missing:
        raise DataError(
            path, "(header)", f"missing column(s) {missing}; found {header}", f"write a CSV with header {key},score"
        )
    k, s = header.index(key), header.index("score")
    extras = {c: header.index(c) for c in extra if c in header}
    out = []
    for n, r in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in r):
            continue
        if len(r) != len(header):
            raise DataError(
                path,
                f"line {n}",
                f"has {len(r)} fields ({','.join(r)}), the header has {len(header)}",
                f"write one {key},score pair per line (a decimal comma or an unquoted comma in a value splits it)",
            )
        out.append((r[k].strip(), r[s].strip(), f"line {n}", {c: r[i].strip() for c, i in extras.items()}))
    return out
