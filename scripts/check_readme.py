"""Run every code block of README.md as written, in order, from the repository root (CI runs this).

Blocks run as a reader would type them: ```bash blocks with ``bash -e``, ```python blocks with the
project's Python. After the first block has made ``.venv``, later blocks run with ``.venv/bin`` first
on PATH (the README says the venv is active from there on). An HTML comment right before a block
changes how it is checked:

* ``<!-- readme-check: dry-run -->`` -- a block whose ``snakemake`` commands take hours (the full
  studies): each ``snakemake`` line runs with ``-n`` appended (config, targets and the job graph are
  checked, nothing is computed); a ``snakemake --report`` line is skipped; every other line runs as
  written.
* ``<!-- readme-check: skip: <reason> -->`` -- not run; the reason is printed.

Usage: python3 scripts/check_readme.py [README.md] [--from N]   (N: first block to run, 1-based)
Exit status 1 names the first block that failed.
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


@dataclass
class Block:
    number: int
    line: int
    language: str
    code: str
    mode: str = "run"
    reason: str = ""


def blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, with the directive before each (if any)."""
    out: list[Block] = []
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[k])
        if not m:
            k += 1
            continue
        start, lang = k, m.group(1)
        end = next((j for j in range(k + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise SystemExit(f"README: the code block opened at line {start + 1} is never closed")
        prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        d = DIRECTIVE.search(prev)
        out.append(
            Block(
                len(out) + 1,
                start + 1,
                lang,
                "\n".join(lines[start + 1 : end]),
                d.group(1) if d else "run",
                (d.group(2) or "") if d else "",
            )
        )
        k = end + 1
    return out


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
        print(f"block {block.number} (line {block.line}): language '{block.language}' is not run")
        return 0
    return subprocess.run(cmd, cwd=REPO, env=env, check=False).returncode


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv and not argv[0].startswith("--") else REPO / "README.md"
    first = int(argv[argv.index("--from") + 1]) if "--from" in argv else 1
    found = blocks(path.read_text(encoding="utf-8"))
    for b in found:
        if b.number < first:
            continue
        head = f"README block {b.number}/{len(found)} (line {b.line}, {b.language or 'text'}, {b.mode})"
        if b.mode == "skip":
            print(f"== {head}: skipped: {b.reason}", flush=True)
            continue
        print(f"== {head}", flush=True)
        t = time.perf_counter()
        rc = run(b)
        print(f"== {head}: exit {rc} in {time.perf_counter() - t:.0f} s", flush=True)
        if rc != 0:
            print(f"README block {b.number} (line {b.line}) failed with exit status {rc}:\n{b.code}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
