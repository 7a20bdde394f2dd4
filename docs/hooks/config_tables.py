"""MkDocs hook: the configuration reference, generated from ``workflow/schemas/*.schema.yaml``.

``docs/configuration.md`` holds the placeholder ``<!-- config-tables -->``; on every build this hook
replaces it with one table per schema file (key path, type, default, description), read from the
schemas the workflow validates its config against, so the page cannot drift from them. A missing
placeholder fails the build. ``render_tables(schema_dir)`` works without MkDocs (the tests call it).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import yaml

PLACEHOLDER = "<!-- config-tables -->"
PAGE = "configuration.md"
# The shared keys first, then the studies in the order of the docs' study pages; a schema file
# not listed here still gets its table (after these, by name).
ORDER = [
    "config",
    "misses_the_mark",
    "benchpress",
    "tailoredbench",
    "mdad",
    "cf_tasks",
    "heldout_intervals",
    "method_comparison",
    "irt_validation",
]
TYPE_NAMES = {"object": "mapping", "array": "list", "string": "string", "integer": "integer", "number": "number"}
TYPE_NAMES |= {"boolean": "boolean", "null": "null"}


def _code(value: object) -> str:
    """``value`` as compact YAML in a code span (flow style, one line)."""
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=math.inf).strip()
    text = text.removesuffix("...").strip()
    return "`" + text.replace("|", "\\|") + "`"


def _text(text: str) -> str:
    """A description as one table cell: whitespace collapsed; outside code spans, the characters
    Markdown or HTML would read (``|``, ``<``, ``>``, ``*``, ``_``) escaped."""
    parts = re.split(r"(`[^`]*`)", " ".join(str(text).split()))
    out = []
    for k, part in enumerate(parts):
        if k % 2:
            out.append(part.replace("|", "\\|"))
        else:
            part = part.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")
            out.append(part.replace("<", "&lt;").replace(">", "&gt;"))
    return "".join(out)


def _resolve(node: dict, defs: dict) -> dict:
    ref = node.get("$ref")
    if ref is None:
        return node
    if not ref.startswith("#/$defs/"):
        raise ValueError(f"schema reference {ref!r}: only local #/$defs/ references are supported")
    return {**defs[ref.removeprefix("#/$defs/")], **{k: v for k, v in node.items() if k != "$ref"}}


def _bounds(node: dict) -> str:
    marks = [("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")]
    out = ", ".join(f"{sign} {node[key]}" for key, sign in marks if key in node)
    out = f" {out}" if out else ""
    if "minItems" in node and node.get("minItems") == node.get("maxItems"):
        out += f" ({node['minItems']} items)"
    elif "minItems" in node:
        out += f" (≥ {node['minItems']} items)"
    return out


def type_of(node: dict, defs: dict) -> str:
    """A schema node's type in words: ``list of integer ≥ 1``, ``one of `map`, `svi```, ..."""
    node = _resolve(node, defs)
    if "enum" in node:
        return "one of " + ", ".join(_code(v) for v in node["enum"])
    kind = node.get("type")
    if kind is None:
        return "any"
    if isinstance(kind, list):
        return " or ".join(TYPE_NAMES.get(k, k) for k in kind) + _bounds(node)
    if kind == "array":
        items = node.get("items")
        return ("list of " + type_of(items, defs) if items else "list") + _bounds(node)
    if kind == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            return "mapping: name → " + type_of(extra, defs)
        return "mapping"
    return TYPE_NAMES.get(kind, kind) + _bounds(node)


def rows(node: dict, prefix: str, defs: dict) -> list[tuple[str, str, str, str]]:
    """(key path, type, default, description) of every property under ``node``, depth first.

    List items with properties appear as ``key[].field``, mapping values with properties (a name
    the user chooses) as ``key.<name>.field``.
    """
    node = _resolve(node, defs)
    required = set(node.get("required", ()))
    out = []
    for name, child in (node.get("properties") or {}).items():
        child = _resolve(child, defs)
        path = f"{prefix}{name}"
        kind = type_of(child, defs) + (" (required)" if name in required else "")
        default = _code(child["default"]) if "default" in child else ""
        out.append((path, kind, default, _text(child.get("description", ""))))
        out += _nested(child, path, defs)
    return out


def _nested(child: dict, path: str, defs: dict) -> list[tuple[str, str, str, str]]:
    out = rows(child, f"{path}.", defs) if "properties" in child else []
    items = child.get("items")
    if isinstance(items, dict) and "properties" in _resolve(items, defs):
        out += rows(items, f"{path}[].", defs)
    extra = child.get("additionalProperties")
    if isinstance(extra, dict) and "properties" in _resolve(extra, defs):
        out += rows(extra, f"{path}.<name>.", defs)
    return out


def schema_files(schema_dir: Path) -> list[Path]:
    found = {p.name.removesuffix(".schema.yaml"): p for p in Path(schema_dir).glob("*.schema.yaml")}
    if not found:
        raise FileNotFoundError(f"no *.schema.yaml in {schema_dir}")
    ordered = [found[name] for name in ORDER if name in found]
    return ordered + sorted(p for name, p in found.items() if name not in ORDER)


def render_table(path: Path) -> str:
    """One schema file as a Markdown section: heading, the schema's description, the table."""
    schema = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    key = path.name.removesuffix(".schema.yaml")
    prefix = "" if key == "config" else f"{key}."
    title = "Shared keys" if key == "config" else f"`{key}`"
    lines = [f"### {title}", "", f"Schema: `workflow/schemas/{path.name}`.", ""]
    if schema.get("description"):
        lines += [_text(schema["description"]), ""]
    lines += ["| key | type | default | description |", "|---|---|---|---|"]
    for name, kind, default, text in rows(schema, prefix, schema.get("$defs", {})):
        lines.append(f"| `{name}` | {kind} | {default} | {text} |")
    return "\n".join(lines) + "\n"


def render_tables(schema_dir: Path) -> str:
    return "\n".join(render_table(p) for p in schema_files(schema_dir))


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if PLACEHOLDER not in markdown:
        raise ValueError(f"docs/{PAGE} lost its placeholder {PLACEHOLDER} (the schema tables go there)")
    schema_dir = Path(config["config_file_path"]).parent / "workflow" / "schemas"
    return markdown.replace(PLACEHOLDER, render_tables(schema_dir))
