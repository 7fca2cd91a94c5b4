"""The report as one self-contained HTML page: tables, and plots as inline SVG (matplotlib,
the ``plots`` extra).  Nothing external is referenced: no script, style sheet or font."""
from __future__ import annotations

import hashlib
import html
import io
import math
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import glossary
from ..methods.buckets import ATTRIBUTES, bucket_key, interval_text
from .formatting import format_interval, format_p, format_value, row_label
from .labels import UNITS, bucket_label, empty_bucket, totals
from .report import (SUBSET_FAMILIES, decoding_line, family_description, format_sizes, format_cell, format_tests,
                     headline_family, last_attacked_set, per_type_rows, significant_buckets, subset_row)
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
dl.glossary { columns: 2 24em; column-gap: 2em; } dl.glossary div { break-inside: avoid; }
table.error-table td { text-align: left; } table.error-table { font-size: 0.8em; }
#error-filters { margin: 0.6em 0; } #error-filters label { margin-right: 0.8em; }
details.errors > summary { font-weight: bold; margin-top: 0.6em; } details.outcome { margin-left: 1.2em; }
details.more { margin-left: 1.2em; } summary { cursor: pointer; }
table.heatmap th { vertical-align: top; text-align: left; width: 9em; } table.heatmap td { border: none; }
.cells { display: flex; flex-wrap: wrap; gap: 3px; }
.cells .cell { width: 8.5em; padding: 0.25em 0.3em; text-align: center; border: 2px solid transparent; }
.cells .cell span { display: block; } .cells .bucket { font-size: 0.85em; overflow-wrap: anywhere; }
.cells .value { font-size: 1.1em; } .cells .n { font-size: 0.8em; }
.cells .significant { border-color: #000; font-weight: bold; }
"""
FIGURE_TYPES = 30  # a figure plots at most this many types (plotted_types)
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


def _tested_table(results: Mapping, method: str, measure: str, better: str, glossary: str,
                  rows: Sequence[tuple], heads: Sequence = ("subset",), n_head="n") -> str:
    """A method's subset table: ``rows`` of (label cells, key, n, {system: value}), each value
    with its interval and † when n < 30, highlighted where the stored verdict
    (``report.subset_row``) says the system is significantly better than every other; the
    note names the family the marks come from."""
    systems = list(results["systems"])
    made = [(labels, subset_row(results, method, key, values, n)) for labels, key, n, values in rows]
    note = (f"<p class='note'>Each {html.escape(measure)} with its interval, † when n &lt; {SMALL}; highlighted: "
            f"{better} than every system it is compared with "
            f"({html.escape(family_description(results, SUBSET_FAMILIES[method]))}).</p>"
            if results.get("tests", {}).get(method) else "")
    return note + _table([*heads, term(n_head, "n")] + [term(f"{measure} {s}", glossary) for s in systems],
                         [[*labels, row["n"][systems[0]]] + [format_cell(row, s).rstrip(" *") for s in systems]
                          for labels, row in made],
                         [[False] * len(labels) + [s in row["best"] for s in systems] for labels, row in made])


def render(report: dict, errors: Optional[Sequence[dict]] = None, error_files: Sequence[Tuple[str, str]] = ()) -> str:
    """The page for a report (``{"tough_ner_version", "run_id", "inputs", "options", "results"}``);
    ``errors``: the error table rows (``tough_ner.errors.error_rows``), their first rows shown
    per system and outcome; ``error_files``: (format, address relative to the page) of the
    full table written beside it, linked."""
    results = report["results"]
    plt = _plotting()
    systems = list(results["systems"])
    counts = totals(results)
    run = f"; run <code id='run-id'>{html.escape(report['run_id'])}</code>" if report.get("run_id") else ""
    parts = [f"<h1>tough-ner report</h1><p class='note'>tough-ner {html.escape(report['tough_ner_version'])}{run}; "
             f"test set {html.escape(str(report['inputs'].get('test', {}).get('path', '')))}; systems: "
             f"{html.escape(', '.join(systems))}. Terms are explained in the <a href='#glossary'>glossary</a>.</p>",
             f"<p class='note' id='decoding'>{html.escape(decoding_line(results))}.</p>"]
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
    rows = [[Raw(term(row_label(row), _row_key(row))
                 + html.escape({"high": " ↑", "low": " ↓"}.get(row["better"], " ·")))]
            + [format_cell(row, s).rstrip(" *") for s in order]
            + [format_sizes(row, order), Raw("<br>".join(map(html.escape, format_tests(row))))]
            for row in table["rows"]]
    best = [[s in row["best"] for s in order] + [False, False] for row in table["rows"]]
    warnings = [f"<li>{html.escape(row['label'])}, {html.escape(s)}: {html.escape(text)}</li>"
                for row in table["rows"] for s, text in row.get("warnings", {}).items()]
    note = ("Systems in the order given, here and in every table and plot. Each value has its "
            f"{statistics.get('confidence', 0.95):.0%} interval ({html.escape(str(statistics.get('interval', '')))}, "
            f"{statistics.get('n_resamples', '')} resamples of {html.escape(str(statistics.get('unit', '')))}s) "
            f"and its n; a highlighted value is significantly better than every system it is compared with "
            f"({html.escape(str(statistics.get('test', '')))}; {html.escape(headline_family(results))}, alpha "
            f"{statistics.get('alpha', '')}); otherwise no system is better. † fewer than {SMALL} items: a small "
            "subset. ↑ higher is better, ↓ lower, · shown but never ranked." if statistics else
            "Systems in the order given, here and in every table and plot.")
    parts += [f"<h2 id='headline'>Headline</h2><p class='note'>{note}</p>",
              _table(["measure"] + order + ["n", "paired tests"], rows, best)]
    if warnings:
        parts.append("<ul class='warnings'>" + "".join(warnings) + "</ul>")

    subsets = ["unseen", "unseen_I", "unseen_O", "diff", "diff_I", "diff_O", "diff_E"]
    parts.append("<h2 id='hardeval'>HardEval: token error rate per subset</h2><p class='note'>The share of wrongly "
                 "labelled tokens (TER, lower is better) among the hard tokens of the test set: tokens unseen in "
                 "training (unseen), and seen tokens whose gold label differs from their usual training label (diff): "
                 "-I inside a gold entity, -O outside, -E an entity of another type than usual (each subset is in "
                 "the glossary). n: tokens in the subset.</p>")
    if plt:
        parts.append(_figure(plt, lambda ax: (grouped_bars(
            plt, ax, subsets, {s: [results["systems"][s]["hardeval"][f"ter_{x}"] for x in subsets] for s in systems}),
            ax.set_ylabel("TER", fontsize=8), legend_outside(ax))))
    parts.append(_tested_table(results, "hardeval", "TER", "significantly lower", "ter", [
        ((term(x, x),), f"ter_{x}", results["systems"][systems[0]]["hardeval"][f"n_{x}"],
         {s: results["systems"][s]["hardeval"][f"ter_{x}"] for s in systems}) for x in subsets]))

    parts.append("<h3>Where the token errors fall (HardEval Table 10)</h3><p class='note'>Share of each system's "
                 "token errors on unseen tokens, on diff tokens and on the other tokens, beside each part's share "
                 "of the test tokens.</p>")
    parts.append(_table(["system", "part", "errors", "share of errors", "tokens", "share of tokens"],
                        [[s, part, cell["errors"], cell["share_of_errors"], cell["tokens"], cell["share_of_tokens"]]
                         for s in systems
                         for part, cell in results["details"][s]["hardeval"].get("error_breakdown", {}).items()]))

    tmr_subsets = ["seen", "unseen_any", "unseen_tokens", "unseen_type", "tcm_all", "tcm_seen", "tcm_unseen"]
    types = sorted({t for s in systems for t in results["details"][s]["tmr"]["per_type"]})
    parts.append("<h2 id='tmr'>TMR: recall per subset and per type</h2><p class='note'>Tough Mentions Recall: the "
                 "share of gold mentions found, among mentions seen in training with their type, unseen ones (the "
                 "text never a training mention, or never of this type), and type-confusable mentions (TCM). n: "
                 "gold mentions in the subset. Then precision, recall and F1 per type.</p>")
    if plt:
        parts.append(_figure(plt, lambda ax: (grouped_bars(
            plt, ax, tmr_subsets, {s: [results["systems"][s]["tmr"][f"recall_{x}"] for x in tmr_subsets]
                                   for s in systems}), ax.set_ylabel("recall", fontsize=8), legend_outside(ax))))
        plotted = plotted_types(types, lambda t: max(results["details"][s]["tmr"]["per_type"].get(t, {}).get("n", 0)
                                                     for s in systems))
        parts.append(_figure(plt, lambda ax: (grouped_bars(
            plt, ax, [f"{t} unseen" for t in plotted] + [f"{t} all" for t in plotted],
            {s: [results["details"][s]["tmr"]["per_type"].get(t, {}).get("recall_unseen_tokens", math.nan)
                 for t in plotted] + [results["details"][s]["tmr"]["per_type"].get(t, {}).get("recall", math.nan)
                                      for t in plotted] for s in systems}),
            ax.set_ylabel("recall", fontsize=8), legend_outside(ax))))
        parts += plotted_note(len(plotted), len(types))
    parts.append(_tested_table(results, "tmr", "recall", "significantly higher", "recall", [
        ((term(x, x),), f"recall_{x}", results["systems"][systems[0]]["tmr"][f"n_{x}"],
         {s: results["systems"][s]["tmr"][f"recall_{x}"] for s in systems}) for x in tmr_subsets],
        (term("subset", "mentions"),)))
    parts.append(per_type_section(results))
    parts.append(averages_section(results))

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
        types = bucket_cells(tables, "tag")[0]
        parts += plotted_note(min(len(types), FIGURE_TYPES), len(types))
    bucket_rows = []
    for attribute in ATTRIBUTES:
        intervals, cells = bucket_cells(tables, attribute)
        place = {interval_key(r["interval"]): i for i, r in enumerate(tables[systems[0]]["buckets"][attribute])}
        bucket_rows += [((term(attribute, attribute), bucket_cell(attribute, list(i) if isinstance(i, tuple) else i,
                                                                  counts)),
                         bucket_key(attribute, place.get(i, 0), i), next((c[i]["n_gold"] for c in cells.values()
                                                                         if i in c), 0),
                         {s: cells[s].get(i, {}).get("f1", math.nan) for s in systems}) for i in intervals]
    parts.append(_tested_table(results, "bucket_f1", "F1", "significantly higher", "f1", bucket_rows,
                               ("attribute", "bucket"), "n gold"))
    for entry in results.get("comparisons", []):
        a, b = entry["systems"]
        comparison = entry["bucket_f1"]
        found = significant_buckets(comparison, counts)
        parts.append(f"<h3>{html.escape(a)} − {html.escape(b)}, per attribute bucket</h3><p class='note'>Paired "
                     f"F1 difference {html.escape(a)} − {html.escape(b)} per bucket: blue where {html.escape(a)} "
                     f"is higher, orange where {html.escape(b)} is; the darker, the larger. A framed bold cell with "
                     "★ differs significantly ("
                     f"{html.escape(family_description(results, entry['family']))}); the other cells are "
                     "muted, however large their difference. n: gold entities in the bucket.</p>")
        parts.append(heatmap(comparison, counts))
        parts.append(_table(["attribute", "bucket", "n", "difference", "interval", "Holm p"],
                            [[term(item["attribute"], item["attribute"]),
                              bucket_cell(item["attribute"], item["interval"], counts), item["n"], f"{item['difference']:+.4f}",
                              format_interval(item["ci"]), format_p(item["p_adjusted"])[2:]] for item in found])
                     if found else "<p class='note'>No bucket F1 differs significantly.</p>")

    if any("nrb" in results["systems"][s] for s in systems):
        with_nrb = [s for s in systems if "nrb" in results["systems"][s]]
        parts.append("<h2 id='nrb'>Name Regularity Bias: NRB vs WTS</h2><p class='note'>Accuracy on the NRB "
                     "targets, names whose type only the context tells, against the WTS control, the same kind of "
                     "sentences with names of their usual type; a large gap with a good WTS accuracy is a bias "
                     "towards the names' usual types.</p>")
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
        parts.append(attack_section(results, plt))
        parts.append(rockner_section(results))

    parts.append(hardest_section(results))
    if errors is not None:
        parts.append(error_section(errors, error_files))
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
    where = f"“{html.escape(last_attacked_set(results) or '')}”"
    parts = [f"<h3 id='rockner-errors'>Error categories on the attacked set {where}</h3><p class='note'>Share of "
             f"the gold entities in each category, original → attacked ({where}).</p>"]
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
                     f"({where} − original; rows gold, columns predicted)</h3>")
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


ERROR_COLUMNS = ("sentence", "document", "text", "context", "gold_type", "predicted_type", "overlap", "subsets",
                 "hard_words")
SUBSET_FLAGS = ("seen", "unseen_tokens", "unseen_type", "tcm")
ERROR_PAGE = 10  # rows shown at first per system and outcome
ERROR_MORE = 40  # rows one click further; the rest only in the full table beside the page


def _error_rows(rows: Sequence[dict]) -> str:
    body = []
    for row in rows:
        flags = [f for f in SUBSET_FLAGS if row.get(f)] or (["spurious"] if row["outcome"] == "spurious" else [])
        cells = [row["sentence"], "" if row["document"] is None else row["document"], row["text"], row["context"],
                 row["gold_type"] or "-", row["predicted_type"] or "-", row["overlap"], " ".join(flags),
                 row["hard_words"]]
        data = (f' data-system="{html.escape(row["system"])}" data-outcome="{html.escape(row["outcome"])}"'
                f' data-subsets="{html.escape(" ".join(flags))}"')
        body.append(f"<tr{data}>" + "".join(f"<td>{_cell(c)}</td>" for c in cells) + "</tr>")
    header = "".join(f"<th>{html.escape(c.replace('_', ' '))}</th>" for c in ERROR_COLUMNS)
    return f"<table class='error-table'><thead><tr>{header}</tr></thead><tbody>" + "".join(body) + "</tbody></table>"


def error_section(rows: Sequence[dict], files: Sequence[Tuple[str, str]] = ()) -> str:
    """The entities that are not correct: the counts per system and outcome, then per system
    and outcome the first ``ERROR_PAGE`` rows, ``ERROR_MORE`` more one ``<details>`` further
    (groups a reader opens and closes with scripts off), and links to the full table
    ``files`` ((format, relative address) pairs) written beside the page.  With scripts on, a
    filter bar narrows the rows shown."""
    from .errors import GOLD_OUTCOMES, OUTCOMES, summary

    counts = summary(rows)
    systems = list(counts)
    links = ", ".join(f"<a href='{html.escape(href)}'>{html.escape(name)}</a>" for name, href in files)
    full = (f"The full table, every gold and predicted entity with its subsets and buckets: {links}." if links else
            "The full table, every gold and predicted entity, is written by <code>--errors FILE</code>.")
    parts = ["<h2 id='errors'>Which entities failed</h2><p class='note'>How many entities each system got wrong, "
             "and in what way; then, per system and outcome, the first of them in test order. "
             f"{full} Outcomes are explained in the <a href='#g-wrong_boundary'>glossary</a>.</p>",
             _table(["system", "gold mentions"] + [term(o, o.replace(" ", "_")) for o in GOLD_OUTCOMES]
                    + [term("extra predictions overlapping a gold entity", "extra_prediction"),
                       term("spurious", "spurious")],
                    [[s, sum(counts[s]["gold"].values()), *counts[s]["gold"].values(),
                      *counts[s]["predicted"].values()] for s in systems], attrs=" id='error-summary'"),
             "<p class='note'>Gold side: each gold mention has one outcome (correct, wrong type, wrong boundary "
             "or missed), so these four sum to the gold mentions. Prediction side, counted apart: predicted "
             "entities that are no gold mention's match, overlapping a gold entity (their rows say wrong "
             "boundary) or overlapping none (spurious).</p>"]
    outcomes = [o for o in OUTCOMES if o != "correct"]
    parts.append("<div id='error-filters' hidden>"
                 + _select("system", systems) + _select("outcome", outcomes)
                 + _select("subset", ["seen", "unseen_tokens", "unseen_type", "tcm", "spurious"])
                 + "<input id='filter-text' type='search' placeholder='entity text contains…'>"
                 + " <span id='filter-count'></span></div>")
    for system in systems:
        mine = [row for row in rows if row["system"] == system and row["outcome"] != "correct"]
        groups = []
        for outcome in outcomes:
            found = [row for row in mine if row["outcome"] == outcome]
            if not found:
                continue
            first, more = found[:ERROR_PAGE], found[ERROR_PAGE:ERROR_PAGE + ERROR_MORE]
            shown = len(first) + len(more)
            group = [f"<details open class='outcome' data-system='{html.escape(system)}' "
                     f"data-outcome='{html.escape(outcome)}'><summary>{html.escape(outcome)}: {len(found)}"
                     + (f" (the first {len(first)} below)" if more else "") + "</summary>", _error_rows(first)]
            if more:
                group.append(f"<details class='more'><summary>rows {len(first) + 1}–{shown} of {len(found)}</summary>"
                             + _error_rows(more) + "</details>")
            if len(found) > shown:
                group.append(f"<p class='note'>The other {len(found) - shown} are in the full table"
                             + (f" ({links})" if links else "") + ".</p>")
            groups.append("".join(group) + "</details>")
        parts.append(f"<details open class='errors' data-system='{html.escape(system)}'><summary>"
                     f"{html.escape(system)}: {len(mine)} entities not correct</summary>" + "".join(groups)
                     + "</details>")
    return "\n".join(parts)


def _select(name: str, options: Sequence[str]) -> str:
    items = "".join(f"<option value='{html.escape(o)}'>{html.escape(o)}</option>" for o in options)
    return (f"<label>{name} <select id='filter-{name}'><option value=''>any</option>{items}</select></label> ")


def provenance_footer(report: Mapping) -> str:
    """How to repeat the report: the command line, package versions, platform, time, seeds
    and the inputs' SHA-256 (``present.provenance``; nothing for a report without the block)."""
    import shlex

    from .provenance import input_files

    block = report.get("provenance")
    if not block:
        return ""
    options, inputs = report.get("options", {}), report.get("inputs", {})
    seeds = [f"resampling {options['seed']}"] if "seed" in options else []
    if isinstance(inputs.get("attacked"), dict) and "seed" in inputs["attacked"]:
        seeds.append(f"attacks {inputs['attacked']['seed']}")
    files = [f"<li><code>{html.escape(str(item['path']))}</code> " + (
        f"sha256 <code>{html.escape(item['sha256'])}</code>" if item["sha256"] else "read from standard input or a "
        "pipe (not kept: no SHA-256)") + "</li>" for item in input_files(inputs)]
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
    items = "".join(f"<div><dt id='g-{html.escape(key)}'>{html.escape(name)}</dt><dd>{html.escape(line)}</dd></div>"
                    for key, name, line in glossary.entries())
    return ("<h2 id='glossary'>Glossary</h2><p class='note'>Also on the command line: "
            f"<code>tough-ner explain KEY</code>.</p><dl class='glossary'>{items}</dl>")


# Filters of the error table; without scripts the filter bar stays hidden and the groups open
# and close by themselves.  A filter opens the groups it searches ("more" rows included).
FILTER_SCRIPT = """<script>
(function () {
  var bar = document.getElementById('error-filters');
  if (!bar) return;
  bar.hidden = false;
  var pick = function (id) { return document.getElementById(id); };
  var rows = document.querySelectorAll('table.error-table tbody tr');
  var groups = document.querySelectorAll('details.outcome');
  function apply() {
    var system = pick('filter-system').value, outcome = pick('filter-outcome').value;
    var subset = pick('filter-subset').value, text = pick('filter-text').value.toLowerCase(), shown = 0;
    var any = system || outcome || subset || text;
    rows.forEach(function (row) {
      var ok = (!system || row.dataset.system === system) && (!outcome || row.dataset.outcome === outcome)
        && (!subset || (' ' + row.dataset.subsets + ' ').indexOf(' ' + subset + ' ') >= 0)
        && (!text || row.cells[2].textContent.toLowerCase().indexOf(text) >= 0);
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    groups.forEach(function (group) {
      var ok = (!system || group.dataset.system === system) && (!outcome || group.dataset.outcome === outcome);
      group.hidden = !ok;
      if (any && ok) group.querySelectorAll('details.more').forEach(function (more) { more.open = true; });
    });
    document.querySelectorAll('details.errors').forEach(function (box) {
      box.hidden = Boolean(system) && box.dataset.system !== system;
    });
    pick('filter-count').textContent = shown + ' of the rows on this page shown';
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
    intervals = dict.fromkeys(i for rows in cells.values() for i in rows if not empty_bucket(attribute, i))
    return list(intervals), cells


def plotted_types(types: Sequence, gold: Callable[[str], int]) -> list:
    """The types a figure plots, in their order: every type, or the ``FIGURE_TYPES`` with the
    most gold mentions (``gold``: a type's count; the first of equals).  A bar and a tick label
    a type made a page of 20,000 types take minutes and gigabytes; its tables list every type."""
    if len(types) <= FIGURE_TYPES:
        return list(types)
    kept = set(sorted(types, key=lambda t: -gold(t))[:FIGURE_TYPES])  # a stable sort: equals keep their order
    return [t for t in types if t in kept]


def plotted_note(plotted: int, types: int) -> List[str]:
    """The note on what the plot above leaves out; none when it shows every type."""
    return [] if plotted == types else [f"<p class='note plotted'>The plot shows the {plotted} types with the most "
                                        f"gold mentions of the {types:,}; the tables list every type.</p>"]


def bucket_figure(plt, tables: Dict[str, dict], counts: Optional[Dict[str, int]] = None):
    """Bucket F1 bars of every attribute, systems side by side, each bucket's gold entities
    under its name and bootstrap whiskers when the tables have them; ``tables``: {system:
    detailed bucket_f1}; ``counts``: training totals (``labels.totals``) to label frequency
    buckets as counts.  Three panels a row, or one when an attribute has more than 10 buckets
    (each bucket keeps room for its label); the tag panel plots ``plotted_types``."""
    shown = {attribute: bucket_cells(tables, attribute) for attribute in ATTRIBUTES}
    types, cells = shown["tag"]
    shown["tag"] = plotted_types(types, lambda t: max(cells[s].get(t, {}).get("n_gold", 0) for s in tables)), cells
    columns = 3 if max(len(intervals) for intervals, _ in shown.values()) <= 10 else 1
    rows = math.ceil(len(ATTRIBUTES) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(10, 8 if columns == 3 else 2.4 * rows), squeeze=False)
    for ax, attribute in zip(axes.flat, ATTRIBUTES):
        intervals, cells = shown[attribute]
        errors = None
        if attribute != "tag":
            position = {interval_key(row["interval"]): i
                        for i, row in enumerate(next(iter(tables.values()))["buckets"][attribute])}
            errors = {s: [table["diagnostics"]["bootstrap"][attribute][position[i]] for i in intervals]
                      for s, table in tables.items() if table["diagnostics"].get("bootstrap")} or None
        names = []
        for i in intervals:
            gold = list(dict.fromkeys(cells[s].get(i, {}).get("n_gold", 0) for s in tables))
            names.append(bucket_label(attribute, list(i) if isinstance(i, tuple) else i, counts, short=True)
                         + "\nn " + "/".join(map(str, gold)))
        grouped_bars(plt, ax, names, {s: [cells[s].get(i, {}).get("f1", math.nan) for i in intervals] for s in tables},
                     errors=errors, missing="no entities")
        ax.set_title(attribute, fontsize=9)
        ax.set_xlabel(UNITS[attribute], fontsize=7)
    for ax in list(axes.flat)[len(ATTRIBUTES):]:
        ax.set_visible(False)
    handles, names = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, names, loc="upper center", ncol=max(len(names), 1), fontsize=8, frameon=False)
    fit_ticks(figure)
    figure.tight_layout(rect=(0, 0, 1, 0.96 if columns == 3 else 1 - 0.3 / (2.4 * rows)))
    return figure


def label_counts(counts: Dict[str, int]) -> str:
    """Training counts by label as text, or "never seen"."""
    return ", ".join(f"{label} {n}" for label, n in counts.items()) or "never seen"


# ---- the bucket comparison as a heatmap of HTML cells ---------------------------------------
# Cells flow in rows that wrap, so labels never overlap at any number of buckets; colours and
# text colours are computed here, so the page needs no script and the contrast is checked.
HIGHER_A, HIGHER_B = (33, 102, 172), (179, 88, 6)  # blue, orange: apart for every colour vision
MUTED = 0.3  # a non-significant cell gets this share of the colour its difference would give


def luminance(rgb: Sequence[int]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0-255 channels)."""
    def linear(channel):
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: Sequence[int], b: Sequence[int]) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_colour(background: Sequence[int]) -> tuple:
    """Black or white, whichever contrasts more with ``background``: at least 4.58 on any
    colour, above WCAG AA's 4.5 for normal text."""
    return max(((0, 0, 0), (255, 255, 255)), key=lambda text: contrast(text, background))


def cell_colour(difference: float, limit: float, significant: bool) -> tuple:
    """The background of a difference: white to blue (A higher) or orange (B higher) by
    |difference| / limit, with a muted share of it when not significant."""
    if math.isnan(difference):
        return (238, 238, 238)
    share = min(abs(difference) / limit, 1.0) * (1.0 if significant else MUTED)
    end = HIGHER_A if difference > 0 else HIGHER_B
    return tuple(round(255 + (e - 255) * share) for e in end)


def _rgb(colour: Sequence[int]) -> str:
    return "#%02x%02x%02x" % tuple(colour)


def heatmap(comparison: Mapping[str, dict], counts: Optional[Mapping[str, int]] = None) -> str:
    """A ``bucket_comparison`` as a grid: one row per attribute, one cell per bucket named by
    its label (types for tag buckets), holding the difference and n; significance read from
    the stored verdicts (``significant``), never decided here.  Buckets empty by construction
    are left out."""
    differences = [d for entry in comparison.values() for d in entry["difference"]
                   if d is not None and not math.isnan(d)]
    limit = max([abs(d) for d in differences] + [1e-9])
    rows = []
    for attribute, entry in comparison.items():
        cells = []
        for interval, difference, n, significant, ci in zip(entry["intervals"], entry["difference"], entry["n"],
                                                            entry["significant"], entry["ci"]):
            if empty_bucket(attribute, interval):
                continue
            difference = _number(difference)
            shown = abs(difference) >= 0.005  # what reads as 0.00 is drawn white, never a red -0.00
            background = cell_colour(difference if shown else 0.0, limit, bool(significant))
            value = "no entities" if math.isnan(difference) else f"{difference:+.2f}" if shown else "0.00"
            tip = f"{interval_text(attribute, interval)}: {value}"
            if not math.isnan(difference) and ci and None not in ci and not math.isnan(_number(ci[0])):
                tip += f" [{_number(ci[0]):+.3f}, {_number(ci[1]):+.3f}]"
            mark = " ★" if significant else ""
            cells.append(f"<div class='cell{' significant' if significant else ''}' title='{html.escape(tip)}' "
                         f"style='background:{_rgb(background)};color:{_rgb(text_colour(background))}'>"
                         f"<span class='bucket'>{html.escape(bucket_label(attribute, interval, counts))}</span>"
                         f"<span class='value'>{value}{mark}</span><span class='n'>n {n}</span></div>")
        rows.append(f"<tr><th>{term(attribute, attribute)}<br><span class='note'>{html.escape(UNITS[attribute])}"
                    f"</span></th><td><div class='cells'>{''.join(cells)}</div></td></tr>")
    return "<table class='heatmap'>" + "".join(rows) + "</table>"


def per_type_section(results: dict) -> str:
    """Precision, recall and F1 per type (the tag buckets, ``report.per_type_rows``), each with
    its interval, F1 marked when its stored verdict says a system is significantly better."""
    systems = list(results["systems"])
    typed = per_type_rows(results)
    rows, best = [], []
    for precision, recall, f1 in zip(typed[0::3], typed[1::3], typed[2::3]):
        row, marks = [f1["type"], f1["n"][systems[0]]], []
        for s in systems:  # format_cell: value [interval], † when n < 30; the winner in bold, not starred
            row += [format_cell(precision, s).rstrip(" *"), precision["n"][s], format_cell(recall, s).rstrip(" *"),
                    format_cell(f1, s).rstrip(" *")]
            marks += [False, False, False, s in f1["best"]]
        rows.append(row)
        best.append([False] + marks)
    confidence = results.get("statistics", {}).get("confidence", 0.95)
    header = ["type", term("n gold", "n")] + [h for s in systems for h in (
        term(f"{s} precision [{confidence:.0%} interval]", "precision"), f"{s} n predicted",
        term(f"{s} recall [{confidence:.0%} interval]", "recall"), term(f"{s} F1 [{confidence:.0%} interval]", "f1"))]
    return ("<h3 id='per-type'>Precision, recall and F1 per type</h3><p class='note'>Strict span matching; every "
            "interval comes from the resamples of the bucket F1 table, whose type buckets these are, and the bold "
            "mark (F1 significantly better, "
            f"{html.escape(results.get('families', {}).get('bucket F1 table', {}).get('description', 'Holm-adjusted'))}"
            f") from its verdicts; precision and recall are not tested. n: gold entities of the type (recall, F1) "
            f"and each system's predicted ones (precision); † n &lt; {SMALL}.</p>" + _table(header, rows, best))


def averages_section(results: dict) -> str:
    """TMR's macro and weighted averages over types (``report.averages_table``): each system's
    precision, recall and F1 (and F-beta) with its interval; none is tested."""
    table = results.get("averages", {})
    systems = [s for s in results["systems"] if table.get(s)]
    if not systems:
        return ""
    measures = [m for m in ("precision", "recall", "f1", "f_beta") if f"macro_{m}" in table[systems[0]]]
    words = {"precision": "precision", "recall": "recall", "f1": "F1",
             "f_beta": f"F-beta (β {results.get('beta', 1):g})"}
    confidence = results.get("statistics", {}).get("confidence", 0.95)
    rows = []
    for average in ("macro", "weighted"):
        row = [term(f"{average} average", average)]
        for s in systems:
            for m in measures:
                cell = table[s].get(f"{average}_{m}", {})
                ci = cell.get("ci")
                row.append(f"{format_value(_number(cell.get('value')))} "
                           f"{format_interval([_number(v) for v in ci]) if ci else ''}".strip())
        rows.append(row)
    header = ["average"] + [term(f"{s} {words[m]} [{confidence:.0%} interval]", m) for s in systems for m in measures]
    gold = ", ".join(f"{s} {table[s]['macro_recall']['n']}" for s in systems)
    predicted = ", ".join(f"{s} {table[s]['macro_precision']['n']}" for s in systems)
    return ("<h3 id='averages'>Averages over types</h3><p class='note'>TMR's spans (exact span and type): the macro "
            "average is the mean over the types with a gold or a predicted mention, the weighted average weighs each "
            "type by its gold mentions (as seqeval's classification_report); intervals from the report's resamples; "
            f"not tested. n: the gold mentions ({html.escape(gold)}), the predicted ones for a precision "
            f"({html.escape(predicted)}).</p>" + _table(header, rows))


def attack_kind(name: str) -> Tuple[str, Optional[float]]:
    """(kind, entity ratio) of an attacked set's name: ``entity 0.4`` is a point of the entity
    curve (its ratio); any other set (``typo 1``, ``case lower``, a file name) stands alone."""
    kind, _, parameter = name.rpartition(" ")
    if kind == "entity":
        try:
            return kind, float(parameter)
        except ValueError:
            pass
    return name, None


def attack_sets(results: Mapping) -> Tuple[List[str], List[str]]:
    """(the entity attack's sets in order, every other set) of a report's attack curves."""
    sets = list(dict.fromkeys(point["set"] for curve in results["attack_curve"].values() for point in curve))
    entity = sorted((name for name in sets if attack_kind(name)[1] is not None), key=lambda n: attack_kind(n)[1])
    return entity, [name for name in sets if name not in entity]


def attack_figure(plt, results: Mapping):
    """F1 under attack: the entity attack as one line per system over its ratios (the original
    F1 dotted beside it), the other attacked sets as bars beside the original; a panel only
    when it has sets."""
    curves = results["attack_curve"]
    systems = [s for s in results["systems"] if s in curves]
    entity, others = attack_sets(results)
    value = {s: {p["set"]: p["f1_attacked"] for p in curves[s]} for s in systems}
    original = {s: _number(results["systems"][s]["rockner"]["f1_original"]) for s in systems}
    panels = [name for name, sets in (("curve", entity), ("bars", others)) if sets]
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 2.8), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        if panel == "curve":
            ratios = [attack_kind(name)[1] for name in entity]
            for k, s in enumerate(systems):
                colour = COLORS[k % len(COLORS)]
                ax.plot(ratios, [_number(value[s].get(name)) for name in entity], marker="o", color=colour, label=s)
                ax.axhline(original[s], color=colour, linestyle=":", linewidth=1)
            ax.set_xlabel("entity attack: share of entities replaced (dotted: original F1)", fontsize=7)
            ax.set_xticks(ratios)
            ax.set_xticklabels([f"{r:g}" for r in ratios], fontsize=7)
            ax.set_ylim(0, 1.05)
            ax.tick_params(axis="y", labelsize=7)
        else:
            grouped_bars(plt, ax, ["original"] + others, {s: [original[s]] + [_number(value[s].get(name))
                                                                             for name in others] for s in systems})
            ax.set_xlabel("other attacked sets", fontsize=7)
        ax.set_ylabel("F1", fontsize=8)
    legend_outside(axes[0][-1])
    fit_ticks(figure)
    figure.tight_layout()
    return figure


def attack_section(results: dict, plt) -> str:
    """F1 under each attack, one series per kind (``attack_figure``), and one table of every
    set and system."""
    curves = results["attack_curve"]
    systems = [s for s in results["systems"] if s in curves]
    entity, others = attack_sets(results)
    value = {s: {p["set"]: p for p in curves[s]} for s in systems}
    original = {s: results["systems"][s]["rockner"]["f1_original"] for s in systems}
    parts = ["<h2 id='rockner'>RockNER: F1 under attack</h2><p class='note'>Each system's F1 on the original test "
             "set and on attacked versions of it. The entity attack replaces a share of the entities (the ratio) "
             "by other names of the same type, so its sets form a curve; every other attack (typos, lower case, "
             "names of another type, rewritten context) is a set of its own, shown as bars and never joined "
             "to the curve. The headline's attack rows and the error categories are of the set "
             f"“{html.escape(last_attacked_set(results) or '')}”.</p>"]
    if plt:
        parts.append(_svg(attack_figure(plt, results)))
    header = ["attacked set"] + [h for s in systems for h in (
        f"F1 {s}", term(f"drop {s}", "f1_drop"), term(f"relative drop {s}", "f1_drop_relative"))]
    rows = [["original"] + [v for s in systems for v in (original[s], "", "")]]
    rows += [[name] + [v for s in systems for v in (
        [value[s][name][k] for k in ("f1_attacked", "f1_drop", "f1_drop_relative")] if name in value[s]
        else ["-", "-", "-"])] for name in entity + others]
    parts.append(_table(header, rows))
    return "\n".join(parts)
