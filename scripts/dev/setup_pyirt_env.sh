#!/usr/bin/env bash
# Create .venv-pyirt (repo root): a separate venv holding py-irt 0.7.1 for the
# IRT validation study (workflow/scripts/irt_validation_pyirt.py).
# py-irt 0.7.1 pins pandas<3, so it cannot share the main .venv (pandas 3).
#
# torch is installed FIRST and pinned to 2.13.0: a CPU build of that exact
# version lies on this machine's disk (/opt/wheels) and pip takes it; any other
# torch spec would download a multi-GB CUDA build.
#
# Resulting versions (pip freeze, filled in after running this script):
#   PLACEHOLDER
set -euo pipefail
cd "$(dirname "$0")/../.."

PY=${PYTHON:-python3.11}
VENV=.venv-pyirt

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet torch==2.13.0
"$VENV/bin/pip" install --quiet py-irt==0.7.1 pyarrow
"$VENV/bin/python" -c "import py_irt, torch, pyro, pandas, numpy; print('py_irt OK; torch', torch.__version__, 'pyro', pyro.__version__, 'pandas', pandas.__version__, 'numpy', numpy.__version__)"
