"""A report card as files for a model card: markdown with a plot of the score per game against
each reference (matplotlib, written beside the markdown)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable


def write_json(card: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(card, indent=1, sort_keys=False) + "\n", encoding="utf-8")


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def write_outputs(report: dict[str, Any], json_path: Path | None, markdown_path: Path | None, write_markdown: Callable[[dict[str, Any], Path], Path],
                  noun: str) -> list[str]:
    """A card or report as JSON and/or markdown with its plot (`write_markdown`); the lines that say where."""
    said = []
    if json_path:
        write_json(report, json_path)
        said.append(f"{noun} written to {json_path}")
    if markdown_path:
        image = write_markdown(report, markdown_path)
        said.append(f"markdown written to {markdown_path} (plot {image})")
    return said


def markdown(card: dict[str, Any], plot_name: str | None) -> str:
    """The card as markdown: header, rating, a table per game, the plot."""
    rating = card["rating"]
    lines = [
        f"## {card['policy']} on {card['suite']}{' (quick)' if card['quick'] else ''}",
        "",
        f"Policy spec: `{card['spec']}`" + (f", engine `{card['engine']}`" if card.get("engine") else "") + ". Matches: {card['matches']['finished']} of {card['matches']['planned']} finished"
        + (f", {card['matches']['aborted']} aborted" if card["matches"]["aborted"] else "") + ".",
        "",
    ]
    if rating:
        lines += [f"**Anchored rating: {rating['rating']:.0f}** (95% CI {rating['lo']:.0f} .. {rating['hi']:.0f}); "
                  f"anchors: " + ", ".join(f"{k} {v:.0f}" for k, v in card["anchors"].items()), ""]
    references = sorted({name for game in card["games"] for name in game["vs"]})
    lines.append("| game | score (95% CI) | " + " | ".join(f"vs {r} W/D/L" for r in references) + " | invalid moves | tokens | median latency |")
    lines.append("|---" * (5 + len(references)) + "|")
    for row in [*card["games"], {**card["overall"], "game": "**overall**"}]:
        vs = [f"{v['wins']}/{v['draws']}/{v['losses']}" if (v := row["vs"].get(r)) else "-" for r in references]
        tokens = row["prompt_tokens"] + row["completion_tokens"]
        latency = "-" if row["median_latency_s"] is None else f"{row['median_latency_s']:.3f} s"
        lines.append(f"| {row['game']} | {percent(row['score'])} ({percent(row['score_lo'])} .. {percent(row['score_hi'])}) | "
                     + " | ".join(vs) + f" | {percent(row['invalid_rate'])} | {tokens} | {latency} |")
    if plot_name:
        lines += ["", f"![score per game against each reference]({plot_name})"]
    return "\n".join(lines) + "\n"


def plot(card: dict[str, Any], path: Path) -> None:
    """Grouped bars: the candidate's score per game against each reference, with Wilson intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    games = [g["game"] for g in card["games"]]
    references = sorted({name for game in card["games"] for name in game["vs"]})
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(games)), 3.6))
    width = 0.8 / max(1, len(references))
    for k, ref in enumerate(references):
        x = np.arange(len(games)) + (k - (len(references) - 1) / 2) * width
        rows = [g["vs"].get(ref) for g in card["games"]]
        score = [r["score"] if r and r["score"] is not None else np.nan for r in rows]
        low = [s - r["score_lo"] if r and r["score"] is not None else 0 for s, r in zip(score, rows)]
        high = [r["score_hi"] - s if r and r["score"] is not None else 0 for s, r in zip(score, rows)]
        ax.bar(x, score, width, yerr=[low, high], capsize=2, label=f"vs {ref}")
    ax.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xticks(np.arange(len(games)), games, rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("score (win 1, draw 1/2)")
    ax.set_title(f"{card['policy']} on {card['suite']}{' (quick)' if card['quick'] else ''}", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_markdown(card: dict[str, Any], path: Path) -> Path:
    return markdown_with_plot(card, path, markdown, plot)


def markdown_with_plot(data: dict[str, Any], path: Path, as_markdown: Callable[[dict[str, Any], str], str],
                       draw: Callable[[dict[str, Any], Path], None]) -> Path:
    """Markdown at `path` and its plot beside it (same name, .png); returns the plot's path."""
    image = path.with_suffix(".png")
    draw(data, image)
    path.write_text(as_markdown(data, image.name), encoding="utf-8")
    return image
