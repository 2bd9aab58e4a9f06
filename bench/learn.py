"""Random vs trained, and how fast a table learns, on the demo model (or --model PATH).

    python bench/learn.py [--epochs 16] [--dim 48] [--model PATH] [--skip-twin]

* twin: the real matrix against its random twin (same shape, same per-dimension scale):
  overlap of each reference word's 10 nearest tokens with its semantic group, the spread of
  cosines between 20,000 random pairs, trustworthiness of a PCA map of 500 random tokens;
* learning: skip-gram with negative sampling on the bundled corpus (prose from CPython's
  documentation) with the model's tokenizer, from random numbers; per epoch, the wall and CPU
  time so far, the agreement of learned and real neighbours (overlap@10 over the 300 most
  frequent tokens, chance ≈ 10 / vocabulary) and how well function words keep apart from
  content words (balanced share of same-kind neighbours, chance 0.5).

The machine is shared: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def twin_contrast(model) -> None:
    from explorer.core.learning import contrast
    from explorer.core.learning.twin import RandomTwin

    t0 = time.perf_counter()
    twin = RandomTwin.of(model, seed=0)
    print(f"twin set up in {time.perf_counter() - t0:.2f} s ({model.rows:,} × {model.dim})")
    twin.decode_block(0, 1)  # compile (or load from numba's cache) first
    t0, c0 = time.perf_counter(), time.process_time()
    for start in range(0, twin.rows, 8192):
        twin.decode_block(start, start + 8192)
    print(
        f"generating every twin row once: {time.perf_counter() - t0:.2f} s "
        f"(CPU {time.process_time() - c0:.2f} s)"
    )
    groups = contrast.reference_groups(model.tokenizer)
    ids = np.random.default_rng(0).choice(model.rows, 500, replace=False)
    print(
        f"{'':>6} {'group overlap@10':>17} {'cosine mean':>12} {'cosine std':>11} "
        f"{'5–95 %':>14} {'trustworthiness':>16}"
    )
    for name, src in (("real", model), ("twin", twin)):
        ov = contrast.group_overlap(src, groups)
        sp = contrast.cosine_spread(src)
        tw = contrast.map_trustworthiness(src, ids)
        print(
            f"{name:>6} {ov:17.3f} {sp.mean:12.3f} {sp.std:11.3f} "
            f"{sp.p05:6.3f}..{sp.p95:5.3f} {tw:16.3f}"
        )
    cat = model.tokenizer.find("cat")
    for name, src in (("real", model), ("twin", twin)):
        nb = contrast.top_neighbors(src, [cat], 8)[0]
        print(f"  neighbours of cat ({name}): {', '.join(model.label(int(i)) for i in nb)}")


def learning(model, epochs: int, dim: int) -> None:
    from explorer.core.context import JobContext
    from explorer.core.learning import trainer

    t0, c0 = time.perf_counter(), time.process_time()
    tr = trainer.make_trainer(model, trainer.LearnParams(epochs=epochs, dim=dim))
    setup = time.perf_counter() - t0
    chance = tr.params.k / (tr.corpus.size - 1)
    print(
        f"corpus: {len(tr.corpus.stream):,} tokens, vocabulary {tr.corpus.size:,} "
        f"(seen ≥ {tr.params.min_count}×); set-up {setup:.1f} s"
    )
    print(
        f"chance agreement {chance:.4f}; function words on the map: {int(tr.flags.sum())} "
        f"of {tr.n_map}"
    )
    print(f"{'epoch':>5} {'wall s':>7} {'cpu s':>7} {'loss':>6} {'agreement':>10} {'purity':>7}")
    reached: list[tuple[int, float, float]] = []

    def epoch(snap: trainer.EpochSnapshot) -> None:
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        loss = snap.loss_curve[-1][1] if snap.loss_curve else float("nan")
        print(
            f"{snap.epoch:5d} {wall:7.1f} {cpu:7.1f} {loss:6.3f} {snap.agreement:10.3f} "
            f"{snap.purity:7.3f}"
        )
        if not reached and snap.purity >= 0.75 and snap.agreement >= 20 * chance:
            reached.append((snap.epoch, wall, cpu))

    trainer.train(tr, JobContext(partial=epoch))
    if reached:
        at, wall, cpu = reached[0]
        print(
            f"structure (purity ≥ 0.75 and agreement ≥ 20× chance) at epoch {at}: "
            f"{wall:.1f} s wall, {cpu:.1f} s CPU (set-up and compilation included)"
        )
    print("learned vs real neighbours (real: the model's rows of the same corpus tokens):")
    for c in trainer.compare(tr):
        print(f"  {c.token:>6}: learned {', '.join(c.learned[:6])}")
        print(f"  {'':>6}  real    {', '.join(c.real[:6])}   overlap@10 {c.overlap:.1f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="model folder (default: the built-in demo)")
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--dim", type=int, default=48)
    ap.add_argument("--skip-twin", action="store_true")
    args = ap.parse_args()
    from explorer.core.model.open import open_model
    from explorer.core.resources import demo_model_dir

    print(load())
    model = open_model(args.model or demo_model_dir())
    print(f"model: {model.path.name} {model.rows:,} × {model.dim} {model.dtype}")
    if not args.skip_twin:
        twin_contrast(model)
    learning(model, args.epochs, args.dim)
    print(load())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
