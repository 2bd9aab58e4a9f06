"""`learn`: train a fresh embedding table on the bundled corpus and write what it learned.

OUT/epoch_NNN.json holds each epoch's loss, neighbours of the watched tokens and map
coordinates; OUT/frames/epoch_NNN.svg (and .png when Qt is available) is the map of each epoch;
OUT/learning.gif animates the PNG frames when Pillow is installed; OUT/summary.json holds the
loss curve and the comparison with the real model's neighbours.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from explorer.cli.common import add_model_options, json_safe, load_model, print_json
from explorer.core.context import JobContext
from explorer.core.map import figure


def register(sub) -> None:
    p = sub.add_parser(
        "learn", help="train an embedding table from random numbers and save its epochs"
    )
    add_model_options(p)
    p.add_argument("--epochs", type=int, default=16, help="training epochs (default 16)")
    p.add_argument("--dim", type=int, default=48, help="table width (default 48)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--corpus", metavar="FILE", help="UTF-8 text (default: the bundled corpus)")
    p.add_argument(
        "--watch",
        metavar="WORDS",
        help="comma-separated tokens whose neighbours are listed (default: list,file,true,…)",
    )
    p.add_argument("--map-tokens", type=int, default=300, help="tokens on the map (default 300)")
    p.add_argument("--no-png", action="store_true", help="SVG frames only (no Qt, no GIF)")
    p.add_argument("--out", metavar="DIR", required=True, help="output folder (created)")
    p.set_defaults(func=run)


def _frame_svg(snap, subtitle: str, watch: Sequence[str]) -> str:
    loss = f"loss {snap.loss_curve[-1][1]:.3f} · " if snap.loss_curve else ""
    watched = {w.strip() for w in watch}
    return figure.map_svg(
        snap.map_coords,
        snap.map_labels,
        title=f"Epoch {snap.epoch} of {snap.epochs}: the {len(snap.map_labels)} most frequent "
        "tokens",
        subtitle=f"{subtitle} · {loss}agreement with the real model {snap.agreement:.3f}",
        category=snap.function_word.astype("int64"),
        categories=("content word", "function word"),
        highlight=[i for i, lab in enumerate(snap.map_labels) if lab.strip() in watched],
        highlight_name="watched (--watch)",
        max_labels=120,
    )


def _epoch_json(snap) -> dict:
    return {
        "epoch": snap.epoch,
        "epochs": snap.epochs,
        "seconds": round(snap.seconds, 3),
        "loss": snap.loss_curve[-1][1] if snap.loss_curve else None,
        "agreement": snap.agreement,
        "purity": snap.purity,
        "neighbors": {
            t: [{"piece": p, "cosine": c} for p, c in nb] for t, nb in snap.neighbors.items()
        },
        "map": [
            {"id": int(i), "piece": lab, "x": float(x), "y": float(y), "function_word": bool(f)}
            for i, lab, (x, y), f in zip(
                snap.map_ids, snap.map_labels, snap.map_coords, snap.function_word, strict=True
            )
        ],
    }


def _write_gif(pngs: list[Path], out: Path) -> bool:
    try:
        from PIL import Image  # optional: pip install "embedding-explorer[gif]"
    except ImportError:
        return False
    frames = [Image.open(p).convert("P", palette=Image.Palette.ADAPTIVE) for p in pngs]
    durations = [700] * len(frames)
    durations[-1] = 2500  # rest on the learned map before the loop restarts
    frames[0].save(out, save_all=True, append_images=frames[1:], duration=durations, loop=0)
    return True


def run(args: argparse.Namespace) -> int:
    from explorer.core.learning import trainer  # numba

    params = trainer.LearnParams(
        dim=args.dim, epochs=args.epochs, seed=args.seed, map_tokens=args.map_tokens
    )
    watch = [w for w in args.watch.split(",") if w] if args.watch else trainer.DEFAULT_WATCH
    model = load_model(args)
    tr = trainer.make_trainer(model, params, args.corpus, watch)
    out = Path(args.out)
    frames = out / "frames"
    frames.mkdir(parents=True, exist_ok=True)
    svg_to_png: Callable[[str, Path], None] | None = None
    if not args.no_png:
        try:
            from explorer.render import raster  # Qt for PNG output only

            svg_to_png = raster.svg_to_png
        except ImportError:
            sys.stderr.write("Qt is not available: SVG frames only\n")
    subtitle = (
        f"skip-gram, {params.dim} dims, {tr.corpus.size:,} tokens of "
        f"{Path(args.corpus).name if args.corpus else 'the bundled corpus'}, seed {params.seed}"
    )
    pngs: list[Path] = []

    def frame(snap: trainer.EpochSnapshot) -> None:
        name = f"epoch_{snap.epoch:03d}"
        text = json.dumps(json_safe(_epoch_json(snap)), ensure_ascii=False, allow_nan=False)
        (out / f"{name}.json").write_text(text + "\n", encoding="utf-8")
        svg = _frame_svg(snap, subtitle, watch)
        (frames / f"{name}.svg").write_text(svg, encoding="utf-8")
        if svg_to_png is not None:
            svg_to_png(svg, frames / f"{name}.png")
            pngs.append(frames / f"{name}.png")
        if not args.json:
            sys.stdout.write(
                f"epoch {snap.epoch:3d}/{snap.epochs}  {snap.seconds:6.1f} s  "
                f"agreement {snap.agreement:.3f}  function/content purity {snap.purity:.3f}\n"
            )

    last = trainer.train(tr, JobContext(partial=frame))
    gif = bool(pngs) and _write_gif(pngs, out / "learning.gif")
    comparison = [vars(c) for c in trainer.compare(tr)]
    summary = {
        "model": str(model.path),
        "corpus_tokens": tr.corpus.size,
        "corpus_length": int(len(tr.corpus.stream)),
        "params": vars(params),
        "seconds": round(last.seconds, 3),
        "loss_curve": [[round(e, 4), loss] for e, loss in last.loss_curve],
        "agreement": last.agreement,
        "chance_agreement": params.k / max(1, tr.corpus.size - 1),
        "purity": last.purity,
        "comparison": comparison,
        "gif": gif,
    }
    (out / "summary.json").write_text(
        json.dumps(json_safe(summary), ensure_ascii=False, allow_nan=False) + "\n",
        encoding="utf-8",
    )
    if args.json:
        print_json(summary)
    else:
        for c in comparison:
            sys.stdout.write(
                f"{c['token']:>10}: learned {', '.join(c['learned'][:5])} | "
                f"real {', '.join(c['real'][:5])} | overlap {c['overlap']:.1f}\n"
            )
        if pngs and not gif:
            sys.stdout.write("no GIF: install Pillow (pip install 'embedding-explorer[gif]')\n")
    return 0
