"""The report as one self-contained HTML page: tables, and plots as inline SVG (matplotlib,
the ``plots`` extra).  Nothing external is referenced: no script, style sheet or font."""
from __future__ import annotations

import html
import io
import math
from typing import Callable, Dict, List, Optional, Sequence

from .buckets import ATTRIBUTES, interval_text
from .report import format_sizes, format_cell, format_interval, format_test, format_value, significant_buckets
from .uncertainty import SMALL

STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.best { font-weight: bold; background: #e3f2e1; }
.note { color: #666; font-size: 0.9em; }
figure { margin: 0.6em 0; } svg { max-width: 100%; height: auto; }
"""
COLORS = ["#3b75af", "#ef8636", "#519e3e", "#c53a32", "#8d6ab8", "#84584e"]
NO_PLOTS = ("Plots need matplotlib: <code>pip install 'tough-ner[plots]'</code>. "
            "Every number is in the tables and in the JSON report.")


def _plotting():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plain_text(figure):
    """Draw every text of ``figure`` as written: a ``$`` in a type (``B-$\\foo$``) or a file name
    (``sys$x$.txt``) is not matplotlib math, which would fail to parse and lose the plot."""
    from matplotlib.text import Text

    for text in figure.findobj(Text):
        text.set_parse_math(False)
    return figure


def _svg(figure) -> str:
    import matplotlib.pyplot as plt

    plain_text(figure)
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prologue and DOCTYPE: the SVG sits inside HTML


def _number(value) -> float:
    return math.nan if value is None else float(value)


def grouped_bars(plt, ax, groups: Sequence[str], series: Dict[str, Sequence[float]],
                 labels: Optional[Dict[str, Sequence[str]]] = None,
                 errors: Optional[Dict[str, Sequence[Sequence[float]]]] = None) -> None:
    """Bars per group, one colour per series; optional text on each bar and error intervals."""
    width = 0.8 / max(len(series), 1)
    for k, (name, values) in enumerate(series.items()):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(groups))]
        heights = [0.0 if math.isnan(_number(v)) else _number(v) for v in values]
        bars = ax.bar(xs, heights, width, label=name, color=COLORS[k % len(COLORS)])
        if errors and name in errors:
            low = [h - (lo if not math.isnan(_number(lo)) else h) for h, (lo, _) in zip(heights, errors[name])]
            high = [(hi if not math.isnan(_number(hi)) else h) - h for h, (_, hi) in zip(heights, errors[name])]
            ax.errorbar(xs, heights, yerr=[[max(v, 0) for v in low], [max(v, 0) for v in high]], fmt="none",
                        ecolor="#333", elinewidth=0.8, capsize=2)
        if labels and name in labels:
            for bar, text in zip(bars, labels[name]):
                ax.text(bar.get_x() + bar.get_width() / 2, 0.02, text, ha="center", va="bottom", fontsize=6,
                        rotation=90, color="#111", bbox={"boxstyle": "square,pad=0.1", "facecolor": "white",
                                                          "edgecolor": "none", "alpha": 0.7})
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=7, rotation=20)
    ax.set_ylim(0, 1.05)
    ax.tick_params(axis="y", labelsize=7)


def _figure(plt, draw: Callable, size=(7, 2.6)) -> str:
    figure, ax = plt.subplots(figsize=size)
    draw(ax)
    return _svg(figure)


def _table(header: Sequence[str], rows: Sequence[Sequence], best: Optional[List[List[bool]]] = None) -> str:
    cells = ["<table><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr>"]
    for r, row in enumerate(rows):
        tds = []
        for c, value in enumerate(row):
            text = html.escape(format_value(value) if isinstance(value, float) else str(value))
            mark = best is not None and c > 0 and best[r][c - 1]
            tds.append(f'<td class="best">{text}</td>' if mark else f"<td>{text}</td>")
        cells.append("<tr>" + "".join(tds) + "</tr>")
    return "\n".join(cells) + "</table>"


def render(report: dict) -> str:
    """The page for a report (``{"tough_ner_version", "inputs", "options", "results"}``)."""
    results = report["results"]
    plt = _plotting()
    systems = list(results["systems"])
    parts = [f"<h1>tough-ner report</h1><p class='note'>tough-ner {html.escape(report['tough_ner_version'])}; "
             f"test set {html.escape(str(report['inputs'].get('test', {}).get('path', '')))}; systems: "
             f"{html.escape(', '.join(systems))}</p>"]
    if plt is None:
        parts.append(f"<p class='note' id='no-plots'>{NO_PLOTS}</p>")

    if results.get("findings"):
        parts.append("<h2>Findings</h2><p class='note'>Most important first; a difference is stated as one only "
                     "when its test is significant.</p><ul id='findings'>"
                     + "".join(f"<li>{html.escape(item['text'])}</li>" for item in results["findings"]) + "</ul>")
    table = results["summary"]
    order = table["systems"]
    statistics = results.get("statistics", {})
    rows = [[row["label"] + (f" ({row['bucket']})" if row.get("bucket") else "")
             + {"high": " ↑", "low": " ↓"}.get(row["better"], " ·")]
            + [format_cell(row, s).rstrip(" *") for s in order] + [format_sizes(row, order), format_test(row)]
            for row in table["rows"]]
    best = [[s in row["best"] for s in order] + [False, False] for row in table["rows"]]
    warnings = [f"<li>{html.escape(row['label'])}, {html.escape(s)}: {html.escape(text)}</li>"
                for row in table["rows"] for s, text in row.get("warnings", {}).items()]
    note = ("Systems ordered by F1. Each value has its "
            f"{statistics.get('confidence', 0.95):.0%} interval ({html.escape(str(statistics.get('interval', '')))}, "
            f"{statistics.get('n_resamples', '')} resamples of {html.escape(str(statistics.get('unit', '')))}s) "
            f"and its n; a highlighted value is significantly better than the other systems' "
            f"({html.escape(str(statistics.get('test', '')))}, Holm-adjusted over the rows, alpha "
            f"{statistics.get('alpha', '')}); otherwise no system is better. † fewer than {SMALL} items: a small "
            "subset. ↑ higher is better, ↓ lower, · shown but never ranked." if statistics else
            "Systems ordered by F1.")
    parts += [f"<h2>Headline</h2><p class='note'>{note}</p>",
              _table(["measure"] + order + ["n", "paired test"], rows, best)]
    if warnings:
        parts.append("<ul class='warnings'>" + "".join(warnings) + "</ul>")

    subsets = ["unseen", "unseen_I", "unseen_O", "diff", "diff_I", "diff_O", "diff_E"]
    parts.append("<h2>HardEval: token error rate per subset</h2>")
    if plt:
        parts.append(_figure(plt, lambda ax: (grouped_bars(
            plt, ax, subsets, {s: [results["systems"][s]["hardeval"][f"ter_{x}"] for x in subsets] for s in systems}),
            ax.set_ylabel("TER", fontsize=8), ax.legend(fontsize=7))))
    parts.append(_table(["subset", "n"] + systems, [[x, results["systems"][systems[0]]["hardeval"][f"n_{x}"]]
                                                     + [results["systems"][s]["hardeval"][f"ter_{x}"] for s in systems]
                                                     for x in subsets]))

    parts.append("<h3>Where the token errors fall (HardEval Table 10)</h3><p class='note'>Share of each system's "
                 "token errors on unseen tokens, on diff tokens and on the other tokens, beside each part's share "
                 "of the test tokens.</p>")
    parts.append(_table(["system", "part", "errors", "share of errors", "tokens", "share of tokens"],
                        [[s, part, cell["errors"], cell["share_of_errors"], cell["tokens"], cell["share_of_tokens"]]
                         for s in systems
                         for part, cell in results["details"][s]["hardeval"].get("error_breakdown", {}).items()]))

    tmr_subsets = ["seen", "unseen_any", "unseen_tokens", "unseen_type", "tcm_all", "tcm_seen", "tcm_unseen"]
    types = sorted({t for s in systems for t in results["details"][s]["tmr"]["per_type"]})
    parts.append("<h2>TMR: recall per subset and per type</h2>")
    if plt:
        parts.append(_figure(plt, lambda ax: (grouped_bars(
            plt, ax, tmr_subsets, {s: [results["systems"][s]["tmr"][f"recall_{x}"] for x in tmr_subsets]
                                   for s in systems}), ax.set_ylabel("recall", fontsize=8), ax.legend(fontsize=7))))
        parts.append(_figure(plt, lambda ax: (grouped_bars(
            plt, ax, [f"{t} unseen" for t in types] + [f"{t} all" for t in types],
            {s: [results["details"][s]["tmr"]["per_type"].get(t, {}).get("recall_unseen_tokens", math.nan)
                 for t in types] + [results["details"][s]["tmr"]["per_type"].get(t, {}).get("recall", math.nan)
                                    for t in types] for s in systems}),
            ax.set_ylabel("recall", fontsize=8), ax.legend(fontsize=7))))
    parts.append(_table(["subset", "n"] + systems, [[x, results["systems"][systems[0]]["tmr"][f"n_{x}"]]
                                                     + [results["systems"][s]["tmr"][f"recall_{x}"] for s in systems]
                                                     for x in tmr_subsets]))

    schemes = [s for s in systems if "schemes" in results["details"][s].get("match_scores", {})]
    if schemes:
        parts.append("<h2>Partial matches (SemEval-2013 schemes, as nervaluate)</h2><p class='note'>strict: same "
                     "span and type; exact: same span; partial: overlap, half credit; type: overlap, same type. "
                     "COR / INC / PAR / MIS / SPU counts.</p>")
        names = ["correct", "incorrect", "partial", "missed", "spurious", "precision", "recall", "f1"]
        parts.append(_table(["system", "scheme", "COR", "INC", "PAR", "MIS", "SPU", "P", "R", "F1"], [
            [s, scheme] + [results["details"][s]["match_scores"]["schemes"][scheme][k] for k in names]
            for s in schemes for scheme in ("strict", "exact", "partial", "type")]))

    parts.append("<h2>Bucket F1 per attribute</h2><p class='note'>Bars: F1 per bucket with its number of gold "
                 "entities; whiskers: bootstrap confidence intervals.</p>")
    if plt:
        parts.append(_svg(bucket_figure(plt, {s: results["details"][s]["bucket_f1"] for s in systems})))
    if "comparison" in results:
        a, b = results["comparison"]["systems"]
        comparison = results["comparison"]["bucket_f1"]
        found = significant_buckets(comparison)
        parts.append(f"<h3>{html.escape(a)} − {html.escape(b)}, per attribute bucket</h3><p class='note'>Paired "
                     "F1 difference per bucket; bold cells with a frame differ significantly (Holm-adjusted over "
                     "every bucket).</p>")
        if plt:
            parts.append(_heatmap(plt, comparison))
        parts.append(_table(["attribute", "bucket", "n", "difference", "interval", "Holm p"],
                            [[item["attribute"], item["bucket"], item["n"], f"{item['difference']:+.4f}",
                              format_interval(item["ci"]), f"{item['p_adjusted']:.3f}"] for item in found])
                     if found else "<p class='note'>No bucket F1 differs significantly.</p>")

    if any("nrb" in results["systems"][s] for s in systems):
        with_nrb = [s for s in systems if "nrb" in results["systems"][s]]
        parts.append("<h2>Name Regularity Bias: NRB vs WTS</h2>")
        if plt:
            parts.append(_figure(plt, lambda ax: (grouped_bars(
                plt, ax, with_nrb, {"NRB": [results["systems"][s]["nrb"]["nrb_accuracy"] for s in with_nrb],
                                    "WTS": [results["systems"][s]["nrb"]["wts_accuracy"] for s in with_nrb]}),
                ax.set_ylabel("accuracy", fontsize=8), ax.legend(fontsize=7)), size=(5, 2.4)))
        for s in with_nrb:
            confusion = results["details"][s]["nrb"].get("nrb_confusion", {})
            columns = sorted({c for cells in confusion.values() for c in cells})
            parts.append(f"<h3>{html.escape(s)}: NRB targets by predicted label</h3>")
            parts.append(_table(["target type"] + columns, [[t] + [cells.get(c, 0) for c in columns]
                                                              for t, cells in confusion.items()]))

    if "attack_curve" in results:
        parts.append("<h2>RockNER: F1 under attack</h2>")
        if plt:
            def draw(ax):
                for k, (name, curve) in enumerate(results["attack_curve"].items()):
                    original = results["systems"][name]["rockner"]["f1_original"]
                    ax.plot(["original"] + [p["set"] for p in curve], [original] + [p["f1_attacked"] for p in curve],
                            marker="o", label=name, color=COLORS[k % len(COLORS)])
                ax.set_ylim(0, 1.05)
                ax.set_ylabel("F1", fontsize=8)
                ax.tick_params(labelsize=7)
                ax.legend(fontsize=7)
            parts.append(_figure(plt, draw, size=(6, 2.6)))
        for name, curve in results["attack_curve"].items():
            parts.append(_table([f"{name}: attacked set", "F1", "drop", "relative drop"],
                                [[p["set"], p["f1_attacked"], p["f1_drop"], p["f1_drop_relative"]] for p in curve]))

    parts.append("<h2>Hardest tokens and mentions</h2>")
    for s in systems:
        tokens = [row for rows in results["details"][s]["hardeval"]["hard_tokens"].values() for row in rows]
        tokens = sorted(tokens, key=lambda r: (-r["errors"], r["token"]))[:10]
        parts.append(f"<h3>{html.escape(s)}</h3>")
        parts.append(_table(["token", "gold", "test count", "errors", "training labels"],
                            [[r["token"], r["gold"], r["n"], r["errors"], label_counts(r["train"])] for r in tokens]))
        parts.append(_table(["mention", "type", "test count", "missed", "training mentions"],
                            [[r["text"], r["type"], r["n"], r["misses"], label_counts(r["train"])]
                             for r in results["details"][s]["hard_mentions"]]))
    body = "\n".join(parts)
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>tough-ner report</title>"
            f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n")


def interval_key(interval):
    """A bucket interval as a dictionary key (a type name, or a (low, high) pair)."""
    return interval if isinstance(interval, str) else tuple(interval)


def bucket_cells(tables: Dict[str, dict], attribute: str):
    """(intervals in order, {system: {interval: bucket row}}) of one attribute over systems'
    detailed bucket tables; tag buckets are the union of the systems' types."""
    cells = {s: {interval_key(r["interval"]): r for r in table["buckets"][attribute]} for s, table in tables.items()}
    return list(dict.fromkeys(i for rows in cells.values() for i in rows)), cells


def bucket_figure(plt, tables: Dict[str, dict]):
    """Bucket F1 bars of every attribute (3 x 3), systems side by side, n_gold on each bar and
    bootstrap whiskers when the tables have them; ``tables``: {system: detailed bucket_f1}."""
    figure, axes = plt.subplots(3, 3, figsize=(10, 7.5))
    for ax, attribute in zip(axes.flat, ATTRIBUTES):
        intervals, cells = bucket_cells(tables, attribute)
        errors = {s: table["diagnostics"]["bootstrap"][attribute] for s, table in tables.items()
                  if attribute != "tag" and table["diagnostics"].get("bootstrap")}
        grouped_bars(plt, ax, [interval_text(attribute, i) for i in intervals],
                     {s: [cells[s].get(i, {}).get("f1", math.nan) for i in intervals] for s in tables},
                     {s: [str(cells[s].get(i, {}).get("n_gold", "")) for i in intervals] for s in tables},
                     errors or None)
        ax.set_title(attribute, fontsize=9)
    axes.flat[0].legend(fontsize=7)
    plain_text(figure).tight_layout()  # tight_layout draws the texts
    return figure


def label_counts(counts: Dict[str, int]) -> str:
    """Training counts by label as text, or "never seen"."""
    return ", ".join(f"{label} {n}" for label, n in counts.items()) or "never seen"


def _heatmap(plt, comparison: dict) -> str:
    """A - B per attribute bucket; significant cells framed and bold; differences that round
    to zero shown as a neutral 0.00 (never a red -0.00)."""
    import numpy as np

    width = max(len(c["difference"]) for c in comparison.values())
    grid = np.full((len(comparison), width), np.nan)
    significant = np.zeros((len(comparison), width), dtype=bool)
    for r, cell in enumerate(comparison.values()):
        grid[r, :len(cell["difference"])] = cell["difference"]
        significant[r, :len(cell["difference"])] = cell.get("significant", [False] * len(cell["difference"]))
    grid = np.where(np.abs(grid) < 0.005, 0.0, grid)  # what reads as 0.00 is drawn as 0
    figure, ax = plt.subplots(figsize=(5, 3.6))
    limit = max(np.nanmax(np.abs(grid)) if np.isfinite(grid).any() else 1.0, 1e-9)
    image = ax.imshow(grid, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
    for r in range(grid.shape[0]):
        for c in range(grid.shape[1]):
            if np.isfinite(grid[r, c]):
                ax.text(c, r, f"{grid[r, c]:+.2f}" if grid[r, c] else "0.00", ha="center", va="center", fontsize=7,
                        fontweight="bold" if significant[r, c] else "normal")
                if significant[r, c]:
                    ax.add_patch(plt.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="#111", linewidth=1.2))
    ax.set_yticks(range(len(comparison)))
    ax.set_yticklabels(list(comparison), fontsize=8)
    ax.set_xticks(range(width))
    ax.set_xticklabels([f"bucket {i}" for i in range(width)], fontsize=7)
    figure.colorbar(image, ax=ax, shrink=0.8).ax.tick_params(labelsize=7)
    return _svg(figure)
