"""The report as one self-contained HTML page: tables, and plots as inline SVG (matplotlib,
the ``plots`` extra).  Nothing external is referenced: no script, style sheet or font."""
from __future__ import annotations

import hashlib
import html
import io
import math
from typing import Callable, Dict, List, Optional, Sequence

from . import glossary
from ..methods.buckets import ATTRIBUTES, interval_text
from .formatting import format_interval, format_p, format_value
from .labels import UNITS, bucket_label, totals
from .report import format_sizes, format_cell, format_test, headline_family, significant_buckets
from ..core.uncertainty import SMALL

STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.best { font-weight: bold; background: #e3f2e1; }
.note { color: #666; font-size: 0.9em; }
figure { margin: 0.6em 0; } svg { max-width: 100%; height: auto; }
.warning { background: #fff4e5; border-left: 4px solid #e69500; padding: 0.4em 0.8em; }
a.term { color: inherit; text-decoration: underline dotted; }
dl.glossary dt { font-weight: bold; margin-top: 0.4em; } dl.glossary dd { margin-left: 1.5em; }
table.error-table td { text-align: left; } table.error-table { font-size: 0.8em; }
#error-filters { margin: 0.6em 0; } #error-filters label { margin-right: 0.8em; }
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
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    plain_text(figure)
    buffer = io.StringIO()
    # Clip-path ids are salted with a random uuid unless a salt is set: salt them with the
    # figure's own texts, so the same report is the same bytes and two figures differ.
    salt = hashlib.sha256("\n".join(t.get_text() for t in figure.findobj(Text)).encode()).hexdigest()
    with matplotlib.rc_context({"svg.hashsalt": salt}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prologue and DOCTYPE: the SVG sits inside HTML


def _number(value) -> float:
    return math.nan if value is None else float(value)


class Raw(str):
    """HTML that a table cell or header shows as it is (already escaped)."""


def _cell(value) -> str:
    if isinstance(value, Raw):
        return value
    return html.escape(format_value(value) if isinstance(value, float) else str(value))


def term(text: str, key: str) -> Raw:
    """``text`` linked to the glossary entry of a result key or term (plain text when the
    glossary does not know it)."""
    try:
        target = glossary.anchor(key)
    except KeyError:
        return Raw(html.escape(text))
    return Raw(f'<a class="term" href="#{target}">{html.escape(text)}</a>')


def _row_key(row: dict) -> str:
    """The glossary key of a summary row: its key, or the attribute of a bucket row."""
    return row["key"].split("_")[0] if row["method"] == "bucket_f1" and row["key"] != "f1" else row["key"]


def bucket_cell(attribute: str, interval, totals=None) -> Raw:
    """A bucket in words, its exact interval in a tooltip."""
    return Raw(f'<span title="{html.escape(interval_text(attribute, interval))}">'
               f"{html.escape(bucket_label(attribute, interval, totals))}</span>")


def grouped_bars(plt, ax, groups: Sequence[str], series: Dict[str, Sequence[float]],
                 labels: Optional[Dict[str, Sequence[str]]] = None,
                 errors: Optional[Dict[str, Sequence[Sequence[float]]]] = None, missing: str = "empty") -> None:
    """Bars per group, one colour per series; optional text on each bar and error intervals.
    A missing value (NaN: an empty subset or bucket) is marked with ``missing`` in grey, a
    zero with a thick line at 0 in the series colour, so the two never look alike."""
    width = 0.8 / max(len(series), 1)
    for k, (name, values) in enumerate(series.items()):
        color = COLORS[k % len(COLORS)]
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(groups))]
        known = [not math.isnan(_number(v)) for v in values]
        heights = [_number(v) if ok else 0.0 for v, ok in zip(values, known)]
        bars = ax.bar(xs, heights, width, label=name, color=color)
        for x, height, ok in zip(xs, heights, known):
            if not ok:
                ax.text(x, 0.02, missing, ha="center", va="bottom", fontsize=6, rotation=90, color="#777",
                        style="italic")
            elif height == 0:
                ax.plot([x - width * 0.45, x + width * 0.45], [0, 0], color=color, linewidth=2.5,
                        solid_capstyle="butt", clip_on=False)
        if errors and name in errors:
            low = [h - (lo if not math.isnan(_number(lo)) else h) for h, (lo, _) in zip(heights, errors[name])]
            high = [(hi if not math.isnan(_number(hi)) else h) - h for h, (_, hi) in zip(heights, errors[name])]
            ax.errorbar(xs, heights, yerr=[[max(v, 0) for v in low], [max(v, 0) for v in high]], fmt="none",
                        ecolor="#333", elinewidth=0.8, capsize=2)
        if labels and name in labels:
            for bar, text, ok in zip(bars, labels[name], known):
                if ok and text:
                    ax.text(bar.get_x() + bar.get_width() / 2, 0.02, text, ha="center", va="bottom", fontsize=6,
                            rotation=90, color="#111", bbox={"boxstyle": "square,pad=0.1", "facecolor": "white",
                                                              "edgecolor": "none", "alpha": 0.7})
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=7)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylim(0, 1.05)
    ax.tick_params(axis="y", labelsize=7)


def legend_outside(ax) -> None:
    """The legend right of the axes, where it cannot cover a bar."""
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, frameon=False)


def overlapping(texts, renderer=None) -> bool:
    """Whether any two visible, non-empty texts' boxes (display units) overlap."""
    boxes = [t.get_window_extent(renderer) for t in texts if t.get_visible() and t.get_text()]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def fit_ticks(figure) -> None:
    """Rotate the x tick labels of each axes whose labels overlap: 35 degrees, then 90.
    Measured with the renderer, without drawing the figure (texts as written: measuring parses them)."""
    plain_text(figure)
    renderer = figure.canvas.get_renderer()
    for ax in figure.axes:
        labels = ax.get_xticklabels()
        for rotation in (35, 90):
            if not overlapping(labels, renderer):
                break
            for label in labels:
                label.set(rotation=rotation, ha="right" if rotation == 35 else "center",
                          rotation_mode="anchor" if rotation == 35 else "default")


def _figure(plt, draw: Callable, size=(7, 2.6)) -> str:
    figure, ax = plt.subplots(figsize=size)
    draw(ax)
    fit_ticks(figure)
    return _svg(figure)


def _table(header: Sequence, rows: Sequence[Sequence], best: Optional[List[List[bool]]] = None,
           attrs: str = "") -> str:
    if not rows:
        return "<p class='note'>(nothing to show)</p>"
    cells = [f"<table{attrs}><thead><tr>" + "".join(f"<th>{_cell(h)}</th>" for h in header) + "</tr></thead><tbody>"]
    for r, row in enumerate(rows):
        tds = []
        for c, value in enumerate(row):
            mark = best is not None and c > 0 and best[r][c - 1]
            tds.append(f'<td class="best">{_cell(value)}</td>' if mark else f"<td>{_cell(value)}</td>")
        cells.append("<tr>" + "".join(tds) + "</tr>")
    return "\n".join(cells) + "</tbody></table>"


def render(report: dict, errors: Optional[Sequence[dict]] = None, max_error_rows: int = 2000) -> str:
    """The page for a report (``{"tough_ner_version", "run_id", "inputs", "options", "results"}``);
    ``errors``: the error table rows (``tough_ner.errors.error_rows``), shown filterable."""
    results = report["results"]
    plt = _plotting()
    systems = list(results["systems"])
    counts = totals(results)
    run = f"; run <code id='run-id'>{html.escape(report['run_id'])}</code>" if report.get("run_id") else ""
    parts = [f"<h1>tough-ner report</h1><p class='note'>tough-ner {html.escape(report['tough_ner_version'])}{run}; "
             f"test set {html.escape(str(report['inputs'].get('test', {}).get('path', '')))}; systems: "
             f"{html.escape(', '.join(systems))}. Terms are explained in the <a href='#glossary'>glossary</a>.</p>"]
    for warning in results.get("warnings", []):
        parts.append(f"<p class='warning'>⚠ {html.escape(warning)}</p>")
    if plt is None:
        parts.append(f"<p class='note' id='no-plots'>{NO_PLOTS}</p>")

    if results.get("findings"):
        parts.append("<h2>Findings</h2><p class='note'>Most important first; a difference is stated as one only "
                     "when its test is significant.</p><ul id='findings'>"
                     + "".join(f"<li>{html.escape(item['text'])}</li>" for item in results["findings"]) + "</ul>")
    table = results["summary"]
    order = table["systems"]
    statistics = results.get("statistics", {})
    rows = [[Raw(term(row["label"], _row_key(row))
                 + html.escape((f" ({row['bucket']})" if row.get("bucket") else "")
                               + {"high": " ↑", "low": " ↓"}.get(row["better"], " ·")))]
            + [format_cell(row, s).rstrip(" *") for s in order] + [format_sizes(row, order), format_test(row)]
            for row in table["rows"]]
    best = [[s in row["best"] for s in order] + [False, False] for row in table["rows"]]
    warnings = [f"<li>{html.escape(row['label'])}, {html.escape(s)}: {html.escape(text)}</li>"
                for row in table["rows"] for s, text in row.get("warnings", {}).items()]
    note = ("Systems ordered by F1. Each value has its "
            f"{statistics.get('confidence', 0.95):.0%} interval ({html.escape(str(statistics.get('interval', '')))}, "
            f"{statistics.get('n_resamples', '')} resamples of {html.escape(str(statistics.get('unit', '')))}s) "
            f"and its n; a highlighted value is significantly better than every system it is compared with "
            f"({html.escape(str(statistics.get('test', '')))}; {html.escape(headline_family(results))}, alpha "
            f"{statistics.get('alpha', '')}); otherwise no system is better. † fewer than {SMALL} items: a small "
            "subset. ↑ higher is better, ↓ lower, · shown but never ranked." if statistics else
            "Systems ordered by F1.")
    parts += [f"<h2 id='headline'>Headline</h2><p class='note'>{note}</p>",
              _table(["measure"] + order + ["n", "paired test"], rows, best)]
    if warnings:
        parts.append("<ul class='warnings'>" + "".join(warnings) + "</ul>")

    subsets = ["unseen", "unseen_I", "unseen_O", "diff", "diff_I", "diff_O", "diff_E"]
    parts.append("<h2 id='hardeval'>HardEval: token error rate per subset</h2>")
    if plt:
        parts.append(_figure(plt, lambda ax: (grouped_bars(
            plt, ax, subsets, {s: [results["systems"][s]["hardeval"][f"ter_{x}"] for x in subsets] for s in systems}),
            ax.set_ylabel("TER", fontsize=8), legend_outside(ax))))
    parts.append(_table([term("subset", "all"), term("n", "n")] + [term(f"TER {s}", "ter") for s in systems],
                        [[term(x, x), results["systems"][systems[0]]["hardeval"][f"n_{x}"]]
                         + [results["systems"][s]["hardeval"][f"ter_{x}"] for s in systems] for x in subsets]))

    parts.append("<h3>Where the token errors fall (HardEval Table 10)</h3><p class='note'>Share of each system's "
                 "token errors on unseen tokens, on diff tokens and on the other tokens, beside each part's share "
                 "of the test tokens.</p>")
    parts.append(_table(["system", "part", "errors", "share of errors", "tokens", "share of tokens"],
                        [[s, part, cell["errors"], cell["share_of_errors"], cell["tokens"], cell["share_of_tokens"]]
                         for s in systems
                         for part, cell in results["details"][s]["hardeval"].get("error_breakdown", {}).items()]))

    tmr_subsets = ["seen", "unseen_any", "unseen_tokens", "unseen_type", "tcm_all", "tcm_seen", "tcm_unseen"]
    types = sorted({t for s in systems for t in results["details"][s]["tmr"]["per_type"]})
    parts.append("<h2 id='tmr'>TMR: recall per subset and per type</h2>")
    if plt:
        parts.append(_figure(plt, lambda ax: (grouped_bars(
            plt, ax, tmr_subsets, {s: [results["systems"][s]["tmr"][f"recall_{x}"] for x in tmr_subsets]
                                   for s in systems}), ax.set_ylabel("recall", fontsize=8), legend_outside(ax))))
        parts.append(_figure(plt, lambda ax: (grouped_bars(
            plt, ax, [f"{t} unseen" for t in types] + [f"{t} all" for t in types],
            {s: [results["details"][s]["tmr"]["per_type"].get(t, {}).get("recall_unseen_tokens", math.nan)
                 for t in types] + [results["details"][s]["tmr"]["per_type"].get(t, {}).get("recall", math.nan)
                                    for t in types] for s in systems}),
            ax.set_ylabel("recall", fontsize=8), legend_outside(ax))))
    parts.append(_table([term("subset", "mentions"), term("n", "n")] + [term(f"recall {s}", "recall")
                                                                       for s in systems],
                        [[term(x, x), results["systems"][systems[0]]["tmr"][f"n_{x}"]]
                         + [results["systems"][s]["tmr"][f"recall_{x}"] for s in systems] for x in tmr_subsets]))

    schemes = [s for s in systems if "schemes" in results["details"][s].get("match_scores", {})]
    if schemes:
        parts.append("<h2>Partial matches (SemEval-2013 schemes, as nervaluate)</h2><p class='note'>strict: same "
                     "span and type; exact: same span; partial: overlap, half credit; type: overlap, same type. "
                     "COR / INC / PAR / MIS / SPU counts.</p>")
        names = ["correct", "incorrect", "partial", "missed", "spurious", "precision", "recall", "f1"]
        parts.append(_table(["system", "scheme", "COR", "INC", "PAR", "MIS", "SPU", "P", "R", "F1"], [
            [s, scheme] + [results["details"][s]["match_scores"]["schemes"][scheme][k] for k in names]
            for s in schemes for scheme in ("strict", "exact", "partial", "type")]))

    parts.append("<h2 id='buckets'>Bucket F1 per attribute</h2><p class='note'>Bars: F1 per bucket with its number "
                 "of gold entities; whiskers: bootstrap confidence intervals; “no entities”: an empty bucket. "
                 "Hover a bucket in the tables for its exact interval.</p>")
    tables = {s: results["details"][s]["bucket_f1"] for s in systems}
    if plt:
        parts.append(_svg(bucket_figure(plt, tables, counts)))
    bucket_rows = []
    for attribute in ATTRIBUTES:
        intervals, cells = bucket_cells(tables, attribute)
        bucket_rows += [[term(attribute, attribute), bucket_cell(attribute, list(i) if isinstance(i, tuple) else i,
                                                                 counts),
                         next((c[i]["n_gold"] for c in cells.values() if i in c), 0)]
                        + [cells[s].get(i, {}).get("f1", math.nan) for s in systems] for i in intervals]
    parts.append(_table(["attribute", "bucket", term("n gold", "n")] + [term(f"F1 {s}", "f1") for s in systems],
                        bucket_rows))
    for entry in results.get("comparisons", []):
        a, b = entry["systems"]
        comparison = entry["bucket_f1"]
        found = significant_buckets(comparison, counts)
        parts.append(f"<h3>{html.escape(a)} − {html.escape(b)}, per attribute bucket</h3><p class='note'>Paired "
                     "F1 difference per bucket; bold cells with a frame differ significantly ("
                     f"{html.escape(results['families'][entry['family']]['description'])}).</p>")
        if plt:
            parts.append(_heatmap(plt, comparison))
        parts.append(_table(["attribute", "bucket", "n", "difference", "interval", "Holm p"],
                            [[term(item["attribute"], item["attribute"]),
                              bucket_cell(item["attribute"], item["interval"], counts), item["n"], f"{item['difference']:+.4f}",
                              format_interval(item["ci"]), format_p(item["p_adjusted"])[2:]] for item in found])
                     if found else "<p class='note'>No bucket F1 differs significantly.</p>")

    if any("nrb" in results["systems"][s] for s in systems):
        with_nrb = [s for s in systems if "nrb" in results["systems"][s]]
        parts.append("<h2 id='nrb'>Name Regularity Bias: NRB vs WTS</h2>")
        if plt:
            parts.append(_figure(plt, lambda ax: (grouped_bars(
                plt, ax, with_nrb, {"NRB": [results["systems"][s]["nrb"]["nrb_accuracy"] for s in with_nrb],
                                    "WTS": [results["systems"][s]["nrb"]["wts_accuracy"] for s in with_nrb]}),
                ax.set_ylabel("accuracy", fontsize=8), legend_outside(ax)), size=(5, 2.4)))
        for s in with_nrb:
            confusion = results["details"][s]["nrb"].get("nrb_confusion", {})
            columns = sorted({c for cells in confusion.values() for c in cells})
            parts.append(f"<h3>{html.escape(s)}: NRB targets by predicted label</h3>")
            parts.append(_table(["target type"] + columns, [[t] + [cells.get(c, 0) for c in columns]
                                                              for t, cells in confusion.items()]))

    if "attack_curve" in results:
        parts.append("<h2 id='rockner'>RockNER: F1 under attack</h2>")
        if plt:
            def draw(ax):
                for k, (name, curve) in enumerate(results["attack_curve"].items()):
                    original = results["systems"][name]["rockner"]["f1_original"]
                    ax.plot(["original"] + [p["set"] for p in curve], [original] + [p["f1_attacked"] for p in curve],
                            marker="o", label=name, color=COLORS[k % len(COLORS)])
                ax.set_ylim(0, 1.05)
                ax.set_ylabel("F1", fontsize=8)
                ax.tick_params(labelsize=7)
                legend_outside(ax)
            parts.append(_figure(plt, draw, size=(6, 2.6)))
        for name, curve in results["attack_curve"].items():
            parts.append(_table([f"{name}: attacked set", "F1", term("drop", "f1_drop"),
                                 term("relative drop", "f1_drop_relative")],
                                [[p["set"], p["f1_attacked"], p["f1_drop"], p["f1_drop_relative"]] for p in curve]))
        parts.append(rockner_section(results))

    parts.append(hardest_section(results))
    if errors is not None:
        parts.append(error_section(errors, max_error_rows))
    parts.append(glossary_section())
    parts.append(provenance_footer(report))
    body = "\n".join(parts)
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>tough-ner report</title>"
            f"<style>{STYLE}</style></head><body>\n{body}\n{FILTER_SCRIPT}</body></html>\n")


def rockner_section(results: dict) -> str:
    """RockNER's error analysis of the last attacked set: each category's share of the gold
    entities on the original and the attacked set, and the confusion difference."""
    from ..methods.rockner import CATEGORIES

    with_attacks = [s for s in results["systems"] if "rockner" in results["systems"][s]]
    parts = ["<h3 id='rockner-errors'>Error categories (last attacked set)</h3><p class='note'>Share of the gold "
             "entities in each category, original → attacked.</p>"]
    header = [term("category", "exact_right_type")] + [
        term(f"{s} {v}", v) for s in with_attacks for v in ("original", "attacked")]
    parts.append(_table(header, [[term(c.replace("_", " "), c)] + [results["systems"][s]["rockner"][f"{v}_{c}"]
                                                                  for s in with_attacks
                                                                  for v in ("original", "attacked")]
                                 for c in CATEGORIES]))
    for s in with_attacks:
        difference = results["details"][s].get("rockner", {}).get("confusion", {}).get("difference", {})
        columns = sorted({c for cells in difference.values() for c in cells})
        parts.append(f"<h3>{html.escape(s)}: {term('confusion difference', 'confusion_difference')} "
                     "(attacked − original; rows gold, columns predicted)</h3>")
        parts.append(_table(["gold \\ predicted"] + columns, [[row] + [f"{cells.get(c, 0):+d}" for c in columns]
                                                              for row, cells in difference.items()]))
    return "\n".join(parts)


def hardest_section(results: dict) -> str:
    """The hardest tokens and mentions of every system, with what each system predicted."""
    from .errors import predicted_text

    systems = list(results["systems"])
    hardest = results.get("hardest", {"tokens": [], "mentions": []})
    parts = ["<h2 id='hardest'>Hardest tokens and mentions</h2><p class='note'>The tokens with most errors and the "
             "mentions missed most often, by any system, with each system's errors and predictions on all "
             "their test occurrences.</p>"]
    parts.append(_table(["token", "gold", term("test count", "n")]
                        + [h for s in systems for h in (f"errors {s}", f"{s} predicted")] + ["training labels"],
                        [[r["token"], r["gold"], r["n"]]
                         + [v for s in systems for v in (r["errors"][s], predicted_text(r["predicted"][s]))]
                         + [label_counts(r["train"])] for r in hardest["tokens"]]))
    parts.append(_table(["mention", "type", term("test count", "n")]
                        + [h for s in systems for h in (f"missed {s}", f"{s} predicted")] + ["training mentions"],
                        [[r["text"], r["type"], r["n"]]
                         + [v for s in systems for v in (r["misses"][s], predicted_text(r["predicted"][s]))]
                         + [label_counts(r["train"])] for r in hardest["mentions"]]))
    return "\n".join(parts)


ERROR_COLUMNS = ("system", "sentence", "document", "text", "context", "gold_type", "predicted_type", "outcome",
                 "overlap", "subsets", "hard_words")
SUBSET_FLAGS = ("seen", "unseen_tokens", "unseen_type", "tcm")


def error_section(rows: Sequence[dict], limit: int) -> str:
    """Every entity that is not correct, filterable by system, outcome and subset (a small
    inline script; with scripts off the whole table shows, grouped in one ``<details>`` per
    system)."""
    from .errors import GOLD_OUTCOMES, OUTCOMES, summary

    wrong = [row for row in rows if row["outcome"] != "correct"]
    counts = summary(rows)
    systems = list(counts)
    parts = ["<h2 id='errors'>Which entities failed</h2><p class='note'>Every gold and predicted entity that is not "
             "correct (the full table, correct ones included, is written by <code>--errors FILE</code>). "
             "Outcomes are explained in the <a href='#g-wrong_boundary'>glossary</a>.</p>",
             _table(["system", "gold mentions"] + [term(o, o.replace(" ", "_")) for o in GOLD_OUTCOMES]
                    + [term("extra predictions overlapping a gold entity", "extra_prediction"),
                       term("spurious", "spurious")],
                    [[s, sum(counts[s]["gold"].values()), *counts[s]["gold"].values(),
                      *counts[s]["predicted"].values()] for s in systems], attrs=" id='error-summary'"),
             "<p class='note'>Gold side: each gold mention has one outcome (correct, wrong type, wrong boundary "
             "or missed), so these four sum to the gold mentions. Prediction side, counted apart: predicted "
             "entities that are no gold mention's match, overlapping a gold entity (their rows say wrong "
             "boundary) or overlapping none (spurious).</p>"]
    parts.append("<div id='error-filters' hidden>"
                 + _select("system", systems) + _select("outcome", [o for o in OUTCOMES if o != "correct"])
                 + _select("subset", ["seen", "unseen_tokens", "unseen_type", "tcm", "spurious"])
                 + "<input id='filter-text' type='search' placeholder='entity text contains…'>"
                 + " <span id='filter-count'></span></div>")
    for system in systems:
        mine = [row for row in wrong if row["system"] == system]
        shown = mine[:limit]
        note = (f" (the first {limit} of {len(mine)})" if len(mine) > limit else f" ({len(mine)})")
        body = []
        for row in shown:
            flags = [f for f in SUBSET_FLAGS if row.get(f)] or (["spurious"] if row["outcome"] == "spurious" else [])
            cells = [row["system"], row["sentence"], "" if row["document"] is None else row["document"], row["text"],
                     row["context"], row["gold_type"] or "-", row["predicted_type"] or "-", row["outcome"],
                     row["overlap"], " ".join(flags), row["hard_words"]]
            data = (f' data-system="{html.escape(row["system"])}" data-outcome="{html.escape(row["outcome"])}"'
                    f' data-subsets="{html.escape(" ".join(flags))}"')
            body.append(f"<tr{data}>" + "".join(f"<td>{_cell(c)}</td>" for c in cells) + "</tr>")
        header = "".join(f"<th>{html.escape(c.replace('_', ' '))}</th>" for c in ERROR_COLUMNS)
        parts.append(f"<details open class='errors'><summary>{html.escape(system)}: entities not correct{note}"
                     f"</summary><table class='error-table'><thead><tr>{header}</tr></thead><tbody>"
                     + "\n".join(body) + "</tbody></table></details>")
    return "\n".join(parts)


def _select(name: str, options: Sequence[str]) -> str:
    items = "".join(f"<option value='{html.escape(o)}'>{html.escape(o)}</option>" for o in options)
    return (f"<label>{name} <select id='filter-{name}'><option value=''>any</option>{items}</select></label> ")


def provenance_footer(report: Mapping) -> str:
    """How to repeat the report: the command line, package versions, platform, time, seeds
    and the inputs' SHA-256 (``present.provenance``; nothing for a report without the block)."""
    import shlex

    block = report.get("provenance")
    if not block:
        return ""
    options, inputs = report.get("options", {}), report.get("inputs", {})
    seeds = [f"resampling {options['seed']}"] if "seed" in options else []
    if isinstance(inputs.get("attacked"), dict) and "seed" in inputs["attacked"]:
        seeds.append(f"attacks {inputs['attacked']['seed']}")
    files = []

    def collect(item):
        if isinstance(item, list):
            for value in item:
                collect(value)
        elif isinstance(item, dict):
            if "path" in item and "sha256" in item:
                files.append(f"<li><code>{html.escape(str(item['path']))}</code> sha256 "
                             f"<code>{html.escape(item['sha256'])}</code></li>")
            for value in item.values():
                collect(value)
    collect(inputs)
    versions = ", ".join(f"{name} {version}" for name, version in block.get("versions", {}).items())
    return ("<footer id='provenance'><h2>How this report was made</h2><p class='note'>To repeat it: run the "
            "command in the same folder with the same inputs, or <code>tough-ner report --rerun REPORT.json"
            "</code>, which checks every input's SHA-256 and says whether the results are identical.</p><ul>"
            f"<li>command: <code>{html.escape(shlex.join(block.get('command', [])))}</code> in "
            f"<code>{html.escape(str(block.get('cwd', '')))}</code></li>"
            f"<li>versions: {html.escape(versions)}</li><li>platform: {html.escape(str(block.get('platform')))}</li>"
            f"<li>time (UTC): {html.escape(str(block.get('time')))}</li>"
            f"<li>seeds: {html.escape(', '.join(seeds) or 'none')}</li>"
            f"<li>inputs:<ul>{''.join(files)}</ul></li></ul></footer>")


def glossary_section() -> str:
    """The glossary, one entry per term, each with an id the tables link to."""
    items = "".join(f"<dt id='g-{html.escape(key)}'>{html.escape(name)}</dt><dd>{html.escape(line)}</dd>"
                    for key, name, line in glossary.entries())
    return ("<h2 id='glossary'>Glossary</h2><p class='note'>Also on the command line: "
            f"<code>tough-ner explain KEY</code>.</p><dl class='glossary'>{items}</dl>")


# Filters of the error table; without scripts the filter bar stays hidden and every row shows.
FILTER_SCRIPT = """<script>
(function () {
  var bar = document.getElementById('error-filters');
  if (!bar) return;
  bar.hidden = false;
  var pick = function (id) { return document.getElementById(id); };
  var rows = document.querySelectorAll('table.error-table tbody tr');
  function apply() {
    var system = pick('filter-system').value, outcome = pick('filter-outcome').value;
    var subset = pick('filter-subset').value, text = pick('filter-text').value.toLowerCase(), shown = 0;
    rows.forEach(function (row) {
      var ok = (!system || row.dataset.system === system) && (!outcome || row.dataset.outcome === outcome)
        && (!subset || (' ' + row.dataset.subsets + ' ').indexOf(' ' + subset + ' ') >= 0)
        && (!text || row.cells[3].textContent.toLowerCase().indexOf(text) >= 0);
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    pick('filter-count').textContent = shown + ' rows shown';
  }
  ['filter-system', 'filter-outcome', 'filter-subset', 'filter-text'].forEach(function (id) {
    pick(id).addEventListener('input', apply);
  });
  apply();
})();
</script>"""


def interval_key(interval):
    """A bucket interval as a dictionary key (a type name, or a (low, high) pair)."""
    return interval if isinstance(interval, str) else tuple(interval)


def bucket_cells(tables: Dict[str, dict], attribute: str):
    """(intervals in order, {system: {interval: bucket row}}) of one attribute over systems'
    detailed bucket tables; tag buckets are the union of the systems' types."""
    cells = {s: {interval_key(r["interval"]): r for r in table["buckets"][attribute]} for s, table in tables.items()}
    return list(dict.fromkeys(i for rows in cells.values() for i in rows)), cells


def bucket_figure(plt, tables: Dict[str, dict], counts: Optional[Dict[str, int]] = None):
    """Bucket F1 bars of every attribute (3 x 3), systems side by side, n_gold on each bar and
    bootstrap whiskers when the tables have them; ``tables``: {system: detailed bucket_f1};
    ``counts``: training totals (``labels.totals``) to label frequency buckets as counts."""
    figure, axes = plt.subplots(3, 3, figsize=(10, 8))
    for ax, attribute in zip(axes.flat, ATTRIBUTES):
        intervals, cells = bucket_cells(tables, attribute)
        errors = {s: table["diagnostics"]["bootstrap"][attribute] for s, table in tables.items()
                  if attribute != "tag" and table["diagnostics"].get("bootstrap")}
        grouped_bars(plt, ax, [bucket_label(attribute, list(i) if isinstance(i, tuple) else i, counts, short=True)
                               for i in intervals],
                     {s: [cells[s].get(i, {}).get("f1", math.nan) for i in intervals] for s in tables},
                     {s: [str(cells[s].get(i, {}).get("n_gold", "")) for i in intervals] for s in tables},
                     errors or None, missing="no entities")
        ax.set_title(attribute, fontsize=9)
        ax.set_xlabel(UNITS[attribute], fontsize=7)
    handles, names = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, names, loc="upper center", ncol=max(len(names), 1), fontsize=8, frameon=False)
    fit_ticks(figure)
    figure.tight_layout(rect=(0, 0, 1, 0.96))
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
