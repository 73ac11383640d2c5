#!/usr/bin/env bash
# Install the peer libraries of benchmarks/peers/run_peers.py in their own virtual
# environments, outside dpestim's dependencies.
#
#   bash benchmarks/peers/install_peers.sh [opacus|diffprivlib|sklearn18|aim|all]
#
# Environment variables:
#   PEERS_DIR   where the venvs go (default /work/venvs)
#   PYTHON      interpreter used to create them (default python3)
#   TORCH_SPEC  torch requirement (default torch==2.13.0+cpu, the CPU build)
#   TORCH_INDEX extra index holding the CPU wheels
#               (default https://download.pytorch.org/whl/cpu; set it to the
#               empty string when the CPU wheel is already reachable, e.g.
#               through pip's find-links or a mirror)
#
# Venvs made:
#   $PEERS_DIR/opacus       CPU PyTorch 2.13.0 + opacus + numpy
#   $PEERS_DIR/diffprivlib  diffprivlib + scikit-learn<1.8 (newest it supports)
#   $PEERS_DIR/sklearn18    diffprivlib + newest scikit-learn, only to reproduce
#                           diffprivlib's failure on scikit-learn >= 1.8
#   $PEERS_DIR/aim          smartnoise-synth (AIM on private-pgm's mbi / JAX),
#                           CPU PyTorch first (snsynth depends on torch)
set -euo pipefail
PEERS_DIR=${PEERS_DIR:-/work/venvs}
PYTHON=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0+cpu}
TORCH_INDEX=${TORCH_INDEX-https://download.pytorch.org/whl/cpu}
index_args=()
if [ -n "$TORCH_INDEX" ]; then index_args=(--extra-index-url "$TORCH_INDEX"); fi
what=${1:-all}
mkdir -p "$PEERS_DIR"

mkvenv() {
    if [ ! -x "$PEERS_DIR/$1/bin/python" ]; then
        "$PYTHON" -m venv "$PEERS_DIR/$1"
        "$PEERS_DIR/$1/bin/python" -m pip install -q --upgrade pip
    fi
}

if [ "$what" = opacus ] || [ "$what" = all ]; then
    mkvenv opacus
    # The CPU build first (no CUDA libraries), then opacus against it.
    "$PEERS_DIR/opacus/bin/python" -m pip install "$TORCH_SPEC" numpy "${index_args[@]}"
    "$PEERS_DIR/opacus/bin/python" -m pip install opacus "$TORCH_SPEC" "${index_args[@]}"
    "$PEERS_DIR/opacus/bin/python" -c \
        "import torch, opacus; print('opacus', opacus.__version__, 'torch', torch.__version__)"
fi

if [ "$what" = diffprivlib ] || [ "$what" = all ]; then
    mkvenv diffprivlib
    # diffprivlib 0.6.x fails on scikit-learn >= 1.8 (see README.md).
    "$PEERS_DIR/diffprivlib/bin/python" -m pip install diffprivlib "scikit-learn<1.8"
    "$PEERS_DIR/diffprivlib/bin/python" -c \
        "import diffprivlib, sklearn; print('diffprivlib', diffprivlib.__version__, 'sklearn', sklearn.__version__)"
fi

if [ "$what" = sklearn18 ] || [ "$what" = all ]; then
    mkvenv sklearn18
    "$PEERS_DIR/sklearn18/bin/python" -m pip install diffprivlib "scikit-learn>=1.8"
fi

if [ "$what" = aim ] || [ "$what" = all ]; then
    mkvenv aim
    # smartnoise-synth requires torch (for its GAN synthesizers, unused by
    # AIM): the CPU build first, as for opacus, then snsynth against it.
    "$PEERS_DIR/aim/bin/python" -m pip install "$TORCH_SPEC" numpy "${index_args[@]}"
    "$PEERS_DIR/aim/bin/python" -m pip install "smartnoise-synth==1.0.8" "$TORCH_SPEC" \
        "${index_args[@]}"
    "$PEERS_DIR/aim/bin/python" -c \
        "import importlib.metadata as m; from snsynth.aim import AIMSynthesizer; \
print(*(p + ' ' + m.version(p) for p in ('smartnoise-synth', 'mbi', 'jax', 'opendp')))"
fi
