"""Real tokenizers that do not belong to a matrix: the demo's own tokenizer.json with its ids
shifted or permuted, and SmolLM2's real vocabulary as a byte-level tokenizer.json."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from explorer.core.resources import demo_model_dir

SMOLLM2_VOCAB = Path(__file__).resolve().parents[1] / "data" / "smollm2_vocab.json.gz"


def _demo_spec() -> dict:
    return json.loads((demo_model_dir() / "tokenizer.json").read_text(encoding="utf-8"))


def _renumbered(spec: dict, new_id) -> dict:
    spec["model"]["vocab"] = {piece: new_id(i) for piece, i in spec["model"]["vocab"].items()}
    for added in spec.get("added_tokens") or []:
        added["id"] = new_id(added["id"])
    return spec


def shifted_demo_tokenizer(folder: Path, shift: int) -> Path:
    """The demo's tokenizer with every id moved up by `shift`: `shift` new pieces come first, as
    when tokens are added at the front of a vocabulary."""
    spec = _renumbered(_demo_spec(), lambda i: i + shift)
    spec["model"]["vocab"].update({f"[front{k}]": k for k in range(shift)})
    return _write(folder, spec)


def permuted_demo_tokenizer(folder: Path, seed: int = 0) -> Path:
    """The demo's tokenizer with its ids shuffled: the same pieces, each on another row."""
    spec = _demo_spec()
    perm = np.random.default_rng(seed).permutation(len(spec["model"]["vocab"])).tolist()
    return _write(folder, _renumbered(spec, lambda i: perm[i]))


def smollm2_tokenizer(folder: Path) -> Path:
    """SmolLM2's real vocabulary (49,152 byte-level pieces, its special tokens) as a byte-level
    BPE tokenizer.json (without merges: the check reads the vocabulary only)."""
    data = json.loads(gzip.decompress(SMOLLM2_VOCAB.read_bytes()))
    tokens, special = data["tokens"], data["special"]
    spec = {
        "version": "1.0",
        "added_tokens": [
            {
                "id": i,
                "content": tokens[i],
                "special": True,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
            }
            for i in special
        ],
        "pre_tokenizer": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        },
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {"type": "BPE", "vocab": {t: i for i, t in enumerate(tokens)}, "merges": []},
    }
    return _write(folder, spec)


def _write(folder: Path, spec: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tokenizer.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return path


def respelled_demo_tokenizer(folder: Path, scheme: str) -> Path:
    """The demo's tokenizer with the same ids, its pieces spelled as a SentencePiece
    (`scheme="metaspace"`: ``▁cat``, ``cat`` for ``##cat``) or a byte-level BPE vocabulary
    (``Ġcat``): the demo's rows belong to it as much as to the original."""
    from explorer.core.tokenizer.text import BYTE_TO_CHAR

    spec = _demo_spec()
    added = {t["content"] for t in spec["added_tokens"]}

    def spelled(piece: str) -> str:
        if piece in added or (piece.startswith("[") and piece.endswith("]")):
            return piece
        text = piece[2:] if piece.startswith("##") else " " + piece
        if scheme == "metaspace":
            return text.replace(" ", "▁")
        return "".join(BYTE_TO_CHAR[b] for b in text.encode("utf-8"))

    vocab = {spelled(p): i for p, i in spec["model"]["vocab"].items()}
    assert len(vocab) == len(spec["model"]["vocab"])  # no two pieces spelled alike
    spec["normalizer"] = None
    spec["pre_tokenizer"] = spec["decoder"] = (
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
        if scheme == "metaspace"
        else {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True}
    )
    spec["model"] = {"type": "BPE", "vocab": vocab, "merges": [], "unk_token": "[UNK]"}
    spec["post_processor"] = None
    return _write(folder, spec)
