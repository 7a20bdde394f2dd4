#!/usr/bin/env bash
# Create .venv-pyirt (repo root): a separate venv holding py-irt 0.7.1 for the
# IRT validation study (workflow/scripts/irt_validation/pyirt_fit.py).
# py-irt 0.7.1 pins pandas<3, so it cannot share the main .venv (pandas 3).
#
# torch is installed FIRST and pinned to 2.13.0: a CPU build of that exact
# version lies on this machine's disk (/opt/wheels) and pip takes it; any other
# torch spec would download a multi-GB CUDA build.
#
# Resulting versions (pip freeze after a fresh run on this machine):
#   Python 3.11.7; py-irt==0.7.1 torch==2.13.0+cpu pyro-ppl==1.9.2 pyro-api==0.1.2
#   numpy==2.4.6 pandas==2.3.3 pyarrow==26.0.1 scipy==1.17.1 scikit-learn==1.9.1
#   pydantic==2.14.3 pydantic_core==2.50.4 ordered-set==4.1.0 rich==13.9.4 typer==0.14.0
#   toml==0.10.2 opt_einsum==3.4.0 tqdm==4.70.1 (+ their small deps: sympy, networkx,
#   Jinja2, fsspec, filelock, click, joblib, threadpoolctl, python-dateutil, pytz, tzdata, ...)
#
# Usage: bash scripts/dev/setup_pyirt_env.sh   (idempotent; ~40 s; PYTHON=... to pick the
# interpreter). Then e.g.
#   .venv-pyirt/bin/python workflow/scripts/irt_validation/pyirt_fit.py --help
set -euo pipefail
cd "$(dirname "$0")/../.."

PY=${PYTHON:-python3.11}
VENV=.venv-pyirt

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet torch==2.13.0
"$VENV/bin/pip" install --quiet py-irt==0.7.1 pyarrow==26.0.1
"$VENV/bin/python" -c "import py_irt, torch, pyro, pandas, numpy; print('py_irt OK; torch', torch.__version__, 'pyro', pyro.__version__, 'pandas', pandas.__version__, 'numpy', numpy.__version__)"
