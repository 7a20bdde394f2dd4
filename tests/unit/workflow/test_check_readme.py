"""scripts/check_readme.py: which blocks of README.md and the docs CI runs, in which order, and how; and the\ndocs' configuration tables (docs/hooks/config_tables.py)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from helpers import REPO

spec = importlib.util.spec_from_file_location("check_readme", REPO / "scripts" / "check_readme.py")
check_readme = importlib.util.module_from_spec(spec)
sys.modules["check_readme"] = check_readme  # dataclasses look their module up there
spec.loader.exec_module(check_readme)

TEXT = """# t

```bash
echo one
```

<!-- readme-check: dry-run -->
```bash
snakemake --cores all --configfile big.yaml   # hours
snakemake --configfile big.yaml --report r.html
cat results/x.md
```

<!-- readme-check: skip: needs the internet -->
```bash
curl https://example.org
```

```python
print("hi")
```
"""


def test_blocks_and_directives():
    found = check_readme.blocks(TEXT)
    assert [(b.number, b.language, b.mode) for b in found] == [
        (1, "bash", "run"),
        (2, "bash", "dry-run"),
        (3, "bash", "skip"),
        (4, "python", "run"),
    ]
    assert found[2].reason == "needs the internet" and found[0].code == "echo one"


def test_dry_run_adds_n_to_snakemake_lines_only():
    code = check_readme.as_dry_run(check_readme.blocks(TEXT)[1].code).splitlines()
    assert code[0] == "snakemake --cores all --configfile big.yaml -n --quiet rules"
    assert code[1].startswith("echo 'skipped (needs the full run)")
    assert code[2] == "cat results/x.md"


def test_every_readme_and_docs_block_is_run_or_says_why_not():
    readme = check_readme.blocks((REPO / "README.md").read_text(encoding="utf-8"))
    assert readme[0].mode == "run" and "pytest tests" in readme[0].code  # install, default run, tests
    found = check_readme.collect(check_readme.default_files())
    assert [b.number for b in found] == list(range(1, len(found) + 1))
    skipped = [b for b in found if b.mode == "skip"]
    # a block CI cannot run (a download, a real model, a torch install) names the test that covers it
    for b in skipped:
        named = re.findall(r"tests/[\w/]+\.py", b.reason)
        assert named and all((REPO / t).is_file() for t in named), (b.path, b.line, b.reason)
    assert len(skipped) <= 4
    assert any(b.language == "python" and b.mode == "run" for b in found)


def test_blocks_run_after_what_they_need():
    """README's first block (install, default run) runs first; every block that reads MuSR comes after one that
    ingests it; `benchcast complete` (the default run's reliability model) after README's first block."""
    found = check_readme.collect(check_readme.default_files())
    assert found[0].path == "README.md" and "snakemake --cores all" in found[0].code
    ingested = False
    for b in found:
        if b.mode != "run" or not check_readme.runs(b):
            continue
        if "results/data/musr/responses.parquet" in b.code or "benchcast fetch musr" in b.code:
            ingested = True
        elif "results/data/musr" in b.code or "benchcast select musr" in b.code:
            assert ingested, f"{b.path}:{b.line} reads MuSR before any block ingests it"
    assert any("benchcast complete" in b.code for b in found[1:])


def _docs_tree(tmp_path: Path, nav: str) -> Path:
    (tmp_path / "docs" / "studies").mkdir(parents=True)
    (tmp_path / "README.md").write_text("```bash\necho readme\n```\n")
    (tmp_path / "docs" / "index.md").write_text("# i\n\n```bash\necho index\n```\n")
    (tmp_path / "docs" / "studies" / "a.md").write_text("```text\nshown\n```\n\n```python\nprint(1)\n```\n")
    (tmp_path / "docs" / "z.md").write_text("```bash\necho z\n```\n")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\n"
        "markdown_extensions:\n"
        "  - pymdownx.emoji:\n"
        "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
        f"nav:\n{nav}"
    )
    return tmp_path


def test_default_files_are_readme_then_nav_order(tmp_path):
    repo = _docs_tree(
        tmp_path,
        "  - Home: index.md\n  - Z: z.md\n  - Studies:\n      - A: studies/a.md\n  - Out: https://example.org\n",
    )
    files = check_readme.default_files(repo)
    assert [f.relative_to(repo).as_posix() for f in files] == [
        "README.md",
        "docs/index.md",
        "docs/z.md",
        "docs/studies/a.md",
    ]
    found = check_readme.collect(files)
    assert [(b.number, b.language, b.code) for b in found] == [
        (1, "bash", "echo readme"),
        (2, "bash", "echo index"),
        (3, "bash", "echo z"),
        (4, "text", "shown"),
        (5, "python", "print(1)"),
    ]
    assert check_readme.describe(found[3]).startswith("shown")


def test_a_docs_page_with_blocks_outside_nav_fails(tmp_path):
    repo = _docs_tree(tmp_path, "  - Home: index.md\n  - A: studies/a.md\n")
    with pytest.raises(SystemExit, match="z.md has code blocks but is not in mkdocs.yml's nav"):
        check_readme.default_files(repo)


def test_list_prints_every_block_and_runs_nothing(tmp_path, capsys):
    page = tmp_path / "p.md"
    page.write_text(TEXT.replace("echo one", f"touch {tmp_path / 'ran'}") + "\n```yaml\na: 1\n```\n")
    assert check_readme.main([str(page), "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and not (tmp_path / "ran").exists()
    assert lines[0].split() == ["1", f"{page}:3", "bash", "run"]
    assert lines[1].split()[2:] == ["bash", "dry-run"]
    assert lines[2].split()[2:] == ["bash", "skip:", "needs", "the", "internet"]
    assert lines[3].split()[2:] == ["python", "run"]
    assert lines[4].split()[2:4] == ["yaml", "shown"]


def test_list_reads_standard_input():
    found = check_readme.collect(["-"], stdin_text=TEXT)
    assert [b.path for b in found] == ["<stdin>"] * 4 and found[1].mode == "dry-run"


def test_from_counts_blocks_over_all_files(tmp_path):
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text("```bash\nexit 3\n```\n")
    second.write_text(f"```bash\ntouch {tmp_path / 'ran'}\n```\n")
    assert check_readme.main([str(first), str(second)]) == 1 and not (tmp_path / "ran").exists()
    assert check_readme.main([str(first), str(second), "--from", "2"]) == 0 and (tmp_path / "ran").exists()


def test_indented_and_attributed_fences():
    text = '- a step:\n\n    ```bash\n    echo in a list\n    ```\n\n```python title="x.py"\nprint(2)\n```\n'
    found = check_readme.blocks(text)
    assert [(b.language, b.code) for b in found] == [("bash", "echo in a list"), ("python", "print(2)")]


# The configuration page's tables (docs/hooks/config_tables.py, an MkDocs hook) come from the schemas.
hook_spec = importlib.util.spec_from_file_location("config_tables", REPO / "docs" / "hooks" / "config_tables.py")
config_tables = importlib.util.module_from_spec(hook_spec)
hook_spec.loader.exec_module(config_tables)


def _schema_paths(node: dict, prefix: str, defs: dict) -> list[str]:
    node = config_tables._resolve(node, defs)
    out = []
    for name, child in (node.get("properties") or {}).items():
        child = config_tables._resolve(child, defs)
        out.append(prefix + name)
        out += _schema_paths(child, f"{prefix}{name}.", defs)
        if isinstance(child.get("items"), dict):
            out += _schema_paths(child["items"], f"{prefix}{name}[].", defs)
        if isinstance(child.get("additionalProperties"), dict):
            out += _schema_paths(child["additionalProperties"], f"{prefix}{name}.<name>.", defs)
    return out


def test_config_tables_have_a_row_for_every_schema_key():
    import yaml

    schemas = sorted((REPO / "workflow" / "schemas").glob("*.schema.yaml"))
    text = config_tables.render_tables(REPO / "workflow" / "schemas")
    for path in schemas:
        schema = yaml.safe_load(path.read_text(encoding="utf-8"))
        key = path.name.removesuffix(".schema.yaml")
        prefix = "" if key == "config" else f"{key}."
        assert f"Schema: `workflow/schemas/{path.name}`" in text
        for name in _schema_paths(schema, prefix, schema.get("$defs", {})):
            assert f"| `{name}` |" in text, name
    assert "| `misses_the_mark.irt.fitter` | one of `map`, `svi` | `map` |" in text
    assert config_tables.PLACEHOLDER in (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
