"""scripts/check_readme.py: which README blocks CI runs, and how."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
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


def test_every_readme_block_is_run_or_says_why_not():
    found = check_readme.blocks((REPO / "README.md").read_text(encoding="utf-8"))
    assert found[0].mode == "run" and "pytest tests" in found[0].code  # install, default run, tests
    assert all(b.reason for b in found if b.mode == "skip")
    assert sum(b.mode == "skip" for b in found) <= 2
    assert any(b.language == "python" and b.mode == "run" for b in found)
