"""An ablation report as markdown with a plot beside it (matplotlib): each comparison's mean pair
difference with its 95% interval, the null variant's drawn apart as the noise reference. The JSON
is the report dict itself (evaluation/card_files.write_json)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluation.ablation_report import METHOD, MOVE_COLUMNS, interval_text, p_text, plural, title
from evaluation.card_files import markdown_with_plot


def _cell(text: Any) -> str:
    """A markdown table cell: names and specs are the user's text, and a `|` would split the row."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(report: dict[str, Any], plot_name: str | None) -> str:
    matches = report["matches"]
    lines = [
        f"## {_cell(title(report)).capitalize()}",
        "",
        f"League `{_cell(report['league'])}`: {plural(report['pairs_per_game'], 'pair')} per game (seed {report['seed']}); "
        f"{matches['finished']} of {matches['planned']} matches finished" + (f", {matches['aborted']} aborted" if matches["aborted"] else "")
        + ("." if report["complete"] else " (incomplete: the figures cover the stored pairs)."),
        "",
        "| policy | against | pairs | W/D/L | difference (95% CI) | p | Holm p | supported |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in report["comparisons"]:
        supported = "yes" if c["significant"] else "no"
        if c["role"] == "null":
            supported = "**yes: warning**" if c["significant"] else "no (as expected)"
        diff = "-" if c["diff"] is None else f"{c['diff']:+.2f} ({interval_text(c).removeprefix('95% CI ')})"
        lines.append(f"| {_cell(c['policy'])} | {_cell(c['against'])} | {c['pairs']} | {c['wins']}/{c['draws']}/{c['losses']} | {diff} | "
                     f"{p_text(c['p_value'])} | {p_text(c['p_holm'])} | {supported} |")
    lines += _per_game(report)
    lines += ["", "### What the data support", ""] + [f"- {_cell(c['verdict'])}" for c in report["comparisons"]]
    lines += ["", "### What each policy's moves cost", "", "| policy | role | spec | " + " | ".join(h for _, h, _ in MOVE_COLUMNS) + " | engine |",
              "|---" * (len(MOVE_COLUMNS) + 4) + "|"]
    for row in report["policies"]:
        figures = " | ".join(text(row[key]) for key, _, text in MOVE_COLUMNS)
        lines.append(f"| {_cell(row['name'])} | {row['role']} | `{_cell(row['spec'])}` | {figures} | {row['engine'] or '-'} |")
    header = {key: name for key, name, _ in MOVE_COLUMNS}
    lines += ["", "### How the figures are computed", ""] + [f"- {header.get(key, key)}: {text}" for key, text in METHOD.items()]
    lines.append(f"- alpha: {report['alpha']:g}")
    if plot_name:
        lines += ["", f"![mean pair difference with its 95% interval, per comparison]({plot_name})"]
    return "\n".join(lines) + "\n"


def _per_game(report: dict[str, Any]) -> list[str]:
    """Each comparison's pairs game by game (only when the ablation plays several games)."""
    if len(report["games"]) < 2:
        return []
    lines = ["", "### Per game", "", "| policy | against | game | pairs | W/D/L | difference (95% CI) | p |", "|---|---|---|---|---|---|---|"]
    for c in report["comparisons"]:
        for game, g in c["per_game"].items():
            diff = "-" if g["diff"] is None else f"{g['diff']:+.2f} ({interval_text(g).removeprefix('95% CI ')})"
            lines.append(f"| {_cell(c['policy'])} | {_cell(c['against'])} | {game} | {g['pairs']} | {g['wins']}/{g['draws']}/{g['losses']} | {diff} | {p_text(g['p_value'])} |")
    return lines


def plot(report: dict[str, Any], path: Path) -> None:
    """A forest plot: one row per comparison, the mean pair difference and its 95% interval; the
    null variant grey, supported differences filled, the rest hollow."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [c for c in report["comparisons"] if c["diff"] is not None]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.45 * max(1, len(rows))))
    for y, c in enumerate(reversed(rows)):
        lo, hi = c["ci95"] or (c["diff"], c["diff"])
        colour = "grey" if c["role"] == "null" else "tab:blue"
        ax.plot([lo, hi], [y, y], color=colour, linewidth=2)
        ax.plot([c["diff"]], [y], "o", color=colour, markersize=7, markerfacecolor=colour if c["significant"] else "white")
        shown = f"Holm p {p_text(c['p_holm'])}" if c["p_holm"] is not None else f"p {p_text(c['p_value'])}"
        ax.text(1.02, y, shown, transform=ax.get_yaxis_transform(), va="center", fontsize=8)
    labels = [f"{c['policy']} vs {c['against']}" for c in reversed(rows)]
    ax.set_yticks(range(len(rows)), [label if len(label) <= 48 else label[:45] + "..." for label in labels], fontsize=8)
    ax.axvline(0.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xlim(-1.05, 1.05)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("points per game over the opponent (win 1, draw 1/2), mean over pairs, 95% CI")
    ax.set_title(title(report)[:90], fontsize=10)
    fig.savefig(path, dpi=110, bbox_inches="tight")  # "tight": the p-values sit right of the axes
    plt.close(fig)


def write_markdown(report: dict[str, Any], path: Path) -> Path:
    """Markdown at `path` and its plot beside it (same name, .png); returns the plot's path."""
    return markdown_with_plot(report, path, markdown, plot)
