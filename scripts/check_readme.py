"""Run every code block of README.md and of the documentation as written, in order, from the repository root (CI).

With no file arguments the pages are README.md, then every page of ``mkdocs.yml``'s ``nav`` in its order
(``docs/<page>``), so a page's blocks may rely on what README's blocks and the pages before it made (README's
first block installs the venv and makes the default run's results). Blocks run as a reader would type them:
```bash blocks with ``bash -e``, ```python blocks with the project's Python; blocks in other languages
(```text, ```yaml, ...) are shown, not run. After the first block has made ``.venv``, later blocks run with
``.venv/bin`` first on PATH (the README says the venv is active from there on). An HTML comment right before a
block changes how it is checked:

* ``<!-- readme-check: dry-run -->`` -- a block whose ``snakemake`` commands take hours (the full
  studies): each ``snakemake`` line runs with ``-n`` appended (config, targets and the job graph are
  checked, nothing is computed); a ``snakemake --report`` line is skipped; every other line runs as
  written.
* ``<!-- readme-check: skip: <reason> -->`` -- not run; the reason is printed.

Usage: python3 scripts/check_readme.py [FILE ...] [--from N] [--list]
  FILE     Markdown files to check, in this order (``-``: standard input); default README.md and the nav's pages
  --from N first block to run, 1-based, counted over all the files
  --list   print every block (number, file:line, language, mode) and run nothing
Exit status 1 names the first block that failed. A page under docs/ that has code blocks but is missing from
the nav fails the default run (its blocks would never be checked).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DIRECTIVE = re.compile(r"<!--\s*readme-check:\s*(run|dry-run|skip)(?::\s*(.*?))?\s*-->")
FENCE = re.compile(r"^(\s*)(`{3,})\s*([\w+-]*)")
RUN_LANGUAGES = ("bash", "sh", "console", "", "python")


@dataclass
class Block:
    number: int
    line: int
    language: str
    code: str
    mode: str = "run"
    reason: str = ""
    path: str = "README.md"


def blocks(text: str, path: str = "README.md") -> list[Block]:
    """The fenced code blocks of a Markdown text, with the directive before each (if any).

    A fence may be indented (a block inside a list); its indentation is removed from the code. The block
    ends at the first line that is a fence of at least as many backticks.
    """
    out: list[Block] = []
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        start, indent, ticks, lang = k, m.group(1), m.group(2), m.group(3)
        closing = re.compile(rf"^\s*`{{{len(ticks)},}}\s*$")
        end = next((j for j in range(k + 1, len(lines)) if closing.match(lines[j])), None)
        if end is None:
            raise SystemExit(f"{path}: the code block opened at line {start + 1} is never closed")
        prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        d = DIRECTIVE.search(prev)
        code = [line[len(indent) :] if line.startswith(indent) else line for line in lines[start + 1 : end]]
        out.append(
            Block(
                len(out) + 1,
                start + 1,
                lang,
                "\n".join(code),
                d.group(1) if d else "run",
                (d.group(2) or "") if d else "",
                path,
            )
        )
        k = end + 1
    return out


def load_mkdocs_yml(path: Path) -> dict:
    """mkdocs.yml as a mapping; ``!!python/name:...`` and other tags (Material's extensions, ``!ENV``) load as None.

    PyYAML is imported here, not at the top: CI starts this script with the system's Python, before README's
    first block has made the venv (see ``main``).
    """
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=Loader) or {}


def nav_pages(mkdocs_yml: Path) -> list[str]:
    """The Markdown pages of ``nav``, in order, as paths relative to the docs folder (external links left out)."""
    config = load_mkdocs_yml(mkdocs_yml)
    pages: list[str] = []

    def walk(item) -> None:
        if isinstance(item, str):
            if item.endswith(".md") and "://" not in item:
                pages.append(item)
        elif isinstance(item, dict):
            for value in item.values():
                walk(value)
        elif isinstance(item, list):
            for value in item:
                walk(value)

    walk(config.get("nav") or [])
    return pages


def default_files(repo: Path = REPO) -> list[Path]:
    """README.md, then the docs pages in nav order. Fails on a docs page with code blocks that nav lacks."""
    mkdocs_yml = repo / "mkdocs.yml"
    if not mkdocs_yml.exists():
        return [repo / "README.md"]
    config = load_mkdocs_yml(mkdocs_yml)
    docs = repo / config.get("docs_dir", "docs")
    pages = [docs / page for page in nav_pages(mkdocs_yml)]
    missing = [str(p.relative_to(repo)) for p in pages if not p.exists()]
    if missing:
        raise SystemExit(f"mkdocs.yml's nav names pages that do not exist: {', '.join(missing)}")
    listed = set(pages)
    for page in sorted(docs.rglob("*.md")):
        if page not in listed and blocks(page.read_text(encoding="utf-8"), str(page.relative_to(repo))):
            raise SystemExit(
                f"{page.relative_to(repo)} has code blocks but is not in mkdocs.yml's nav, so they would never run; "
                "fix: add it to nav"
            )
    return [repo / "README.md", *pages]


def collect(files: list[Path | str], stdin_text: str | None = None) -> list[Block]:
    """Every block of the files in order, numbered across them (``-`` reads ``stdin_text`` or standard input)."""
    found: list[Block] = []
    for f in files:
        if str(f) == "-":
            text, name = (sys.stdin.read() if stdin_text is None else stdin_text), "<stdin>"
        else:
            path = Path(f)
            text = path.read_text(encoding="utf-8")
            name = str(path.resolve().relative_to(REPO)) if path.resolve().is_relative_to(REPO) else str(path)
        for b in blocks(text, name):
            b.number = len(found) + 1
            found.append(b)
    return found


def runs(block: Block) -> bool:
    return block.language in RUN_LANGUAGES


def describe(block: Block) -> str:
    """``mode`` as --list and the progress lines show it: run, dry-run, skip: reason, shown (a text block)."""
    if block.mode == "skip":
        return f"skip: {block.reason}"
    if not runs(block):
        return f"shown (language '{block.language}' is not run)"
    return block.mode


def as_dry_run(code: str) -> str:
    """``snakemake`` lines with ``-n``; ``snakemake --report`` lines dropped (they need the full run)."""
    out = []
    for line in code.splitlines():
        cmd = line.split("#", 1)[0].rstrip()
        if cmd.lstrip().startswith("snakemake"):
            if "--report" in cmd:
                out.append(f"echo 'skipped (needs the full run): {cmd.strip()}'")
            else:
                out.append(f"{cmd} -n --quiet rules")
        else:
            out.append(line)
    return "\n".join(out)


def run(block: Block) -> int:
    env = dict(os.environ)
    venv = REPO / ".venv" / "bin"
    if venv.is_dir():
        env["PATH"] = f"{venv}{os.pathsep}{env['PATH']}"
        env["VIRTUAL_ENV"] = str(venv.parent)
    code = as_dry_run(block.code) if block.mode == "dry-run" else block.code
    if block.language in ("bash", "sh", "console", ""):
        cmd = ["bash", "-e", "-o", "pipefail", "-c", code]
    elif block.language == "python":
        cmd = [str(venv / "python") if venv.is_dir() else sys.executable, "-c", code]
    else:
        print(f"block {block.number} ({block.path}, line {block.line}): language '{block.language}' is not run")
        return 0
    return subprocess.run(cmd, cwd=REPO, env=env, check=False).returncode


def have_yaml() -> bool:
    try:
        import yaml  # noqa: F401
    except ImportError:
        return False
    return True


def run_blocks(found: list[Block], first: int, total: int | str) -> int:
    for b in found:
        if b.number < first:
            continue
        head = f"block {b.number}/{total} ({b.path}, line {b.line}, {b.language or 'text'}, {b.mode})"
        if b.mode == "skip":
            print(f"== {head}: skipped: {b.reason}", flush=True)
            continue
        print(f"== {head}", flush=True)
        t = time.perf_counter()
        rc = run(b)
        print(f"== {head}: exit {rc} in {time.perf_counter() - t:.0f} s", flush=True)
        if rc != 0:
            print(
                f"block {b.number} ({b.path}, line {b.line}) failed with exit status {rc}:\n{b.code}", file=sys.stderr
            )
            return 1
    return 0


def main(argv: list[str]) -> int:
    argv = list(argv)
    first = 1
    if "--from" in argv:
        k = argv.index("--from")
        first = int(argv[k + 1])
        del argv[k : k + 2]
    listing = "--list" in argv
    files = [a for a in argv if a != "--list"]
    unknown = [a for a in files if a.startswith("--")]
    if unknown:
        print(f"unknown option {unknown[0]}; usage: check_readme.py [FILE ...] [--from N] [--list]", file=sys.stderr)
        return 2
    if not files and not have_yaml():
        # The docs' order is mkdocs.yml's nav, read with PyYAML. Without it (CI starts this script with the
        # system's Python), carry on in the venv: README's first block makes it.
        venv_python = REPO / ".venv" / "bin" / "python"
        rerun = [str(venv_python), str(Path(__file__).resolve())] + (["--list"] if listing else [])
        if venv_python.exists():
            os.execv(rerun[0], [*rerun, "--from", str(first)])
        if listing:
            print("--list of the docs reads mkdocs.yml with PyYAML: run it inside the venv", file=sys.stderr)
            return 2
        readme = collect([REPO / "README.md"])
        rc = run_blocks(readme, first, f"{len(readme)}+docs")  # the docs' blocks are counted once PyYAML is there
        if rc:
            return rc
        if not venv_python.exists():
            print("README's blocks did not make .venv, which the docs' blocks need (PyYAML reads nav)", file=sys.stderr)
            return 1
        os.execv(rerun[0], [*rerun, "--from", str(max(first, len(readme) + 1))])
    found = collect(files or default_files())
    if listing:
        for b in found:
            print(f"{b.number:3d}  {b.path}:{b.line}  {b.language or 'text'}  {describe(b)}")
        return 0
    return run_blocks(found, first, len(found))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
