"""Tables for papers: the headline table, each method's subset table and precision, recall and
F1 per type as LaTeX (booktabs), Markdown or CSV (a file a table), read from a report's results
(never recomputed).

Each table has an ``n`` column (the items a rate is computed over).  A summary row with
``ci`` (``{system: [low, high]}``) prints ``value [low, high]``; the systems listed in its
``best`` are in bold (the report decides who wins).

Names and types come from the user, so every text is escaped: in LaTeX its special characters
(and a leading ``[``, which a row's end would read as its spacing); in Markdown what would start
raw HTML or an entity (``<``, ``&``, as entities), split a table cell (``|``), make a link or an
image (``[``, ``]``) or a code span (`````), and the backslash itself; a line break becomes a
space.  So a name shows as typed and can neither run HTML, fetch an image nor break a table.
Emphasis marks (``*``, ``_``) are left as typed: they only style.  CSV goes through the one
writer that neutralises cells a spreadsheet would evaluate (``formatting.csv_text``); there a
value, its interval and its marks are columns of their own.
"""
from __future__ import annotations

import math
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence

from ..methods.buckets import ATTRIBUTES, bucket_key
from ..core.uncertainty import SMALL
from .formatting import csv_text, format_p
from .labels import bucket_label, totals

HARDEVAL_SUBSETS = ("all", "unseen", "unseen_I", "unseen_O", "diff", "diff_I", "diff_O", "diff_E")
TMR_SUBSETS = ("seen", "unseen_any", "unseen_tokens", "unseen_type", "tcm_all", "tcm_seen", "tcm_unseen")
# the items behind a summary key, when the row does not carry its n: (method, n key)
N_OF = {"precision": ("tmr", "n_predicted"), "recall": ("tmr", "n_mentions"), "f1": ("tmr", "n_mentions"),
        "hardeval": ("hardeval", ("n_unseen", "n_diff")), "nrb_accuracy": ("nrb", "nrb_n"),
        "wts_accuracy": ("nrb", "wts_n"), "gap": ("nrb", "nrb_n"), "f1_attacked": ("rockner", "n_attacked"),
        "f1_drop": ("rockner", "n_attacked")}


class Cell(NamedTuple):
    value: object  # a number, or text
    ci: Optional[Sequence[float]] = None
    bold: bool = False
    std: Optional[float] = None  # sample std over runs
    small: bool = False  # n < SMALL: marked † as in the HTML
    signed: bool = False  # a difference: "+" shown
    text: Optional[str] = None  # how LaTeX and Markdown show the value, when not as a number (a p-value)


class Table(NamedTuple):
    title: str
    columns: List[str]
    rows: List[List[Cell]]
    label: str  # a short id (LaTeX \label, Markdown heading anchor, CSV file name)
    kinds: Optional[Sequence[str]] = None  # per column, what CSV writes beside its value (CSV_FIELDS); None: plain


def _number(value, digits: int, signed: bool = False) -> str:
    if value is None:  # NaN, as results read back from JSON hold it
        return "nan"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return str(value)
    return "nan" if math.isnan(value) else f"{round(value, digits) + 0.0:{'+' if signed else ''}.{digits}f}"


def _cell_text(cell: Cell, digits: int, escape=None) -> str:
    """The cell as text; ``escape`` applied to a text value (numbers and intervals are ours)."""
    text = cell.text if cell.text is not None else _number(cell.value, digits, cell.signed)
    if escape is not None and (isinstance(cell.value, str) or cell.text is not None):
        text = escape(text)
    if cell.std is not None:
        text += f" ± {_number(float(cell.std), digits)}"
    if cell.ci is not None and not any(v is None or math.isnan(v) for v in cell.ci):
        text += f" [{_number(float(cell.ci[0]), digits)}, {_number(float(cell.ci[1]), digits)}]"
    if cell.small:
        text += "†"
    return text


def _n(results: Mapping, row: Mapping, order: Sequence[str]) -> object:
    """The row's n: its own ``n`` (one number, or per system), else the method's n key."""
    n = row.get("n")
    if not n:  # no resampling: the method's own count keys
        method, key = N_OF.get(row["key"], (row["method"], "n_" + row["key"].split("_", 1)[-1]))
        scores = [results["systems"][s].get(method, {}) for s in order]
        keys = key if isinstance(key, tuple) else (key,)
        values = [sum(score[k] for k in keys) if all(k in score for k in keys) else None for score in scores]
        n = dict(zip(order, values))
        if row["method"] == "bucket_f1" and row["key"] != "f1":  # the bucket's gold entities
            n = {s: _bucket_n(results, s, row["key"]) for s in order}
    if isinstance(n, Mapping):
        known = [v for v in n.values() if v is not None]
        if not known:
            return ""
        return known[0] if len(set(known)) == 1 else " / ".join(str(n.get(s, "")) for s in order)
    return n


def _bucket_n(results: Mapping, system: str, key: str):
    """Gold entities in the bucket of a bucket key (``eLen_2_f1``, ``tag_LOC_f1``)."""
    attribute, which = key.split("_", 1)[0], key.split("_", 1)[1].rsplit("_", 1)[0]
    rows = results["details"][system]["bucket_f1"]["buckets"][attribute]
    found = [r for i, r in enumerate(rows) if (r["interval"] == which if attribute == "tag" else str(i) == which)]
    return found[0]["n_gold"] if found else None


def _tested(results: Mapping, method: str, key: str, system: str, value, n=None) -> Cell:
    """A subset table's cell with the interval and the significance the report computed for it
    (``results["tests"]``, Holm-adjusted over the method's keys); a bare value without them;
    marked small when its ``n`` is under ``SMALL``."""
    from .report import subset_row  # the page's subset tables read the same

    row = subset_row(results, method, key, {system: value}, n)
    return Cell(value, row["ci"].get(system), system in row["best"], row["std"].get(system), row["small"][system])


def compared_pairs(results: Mapping) -> List[tuple]:
    """The pairs of systems the report tested (``statistics.pairs``), as (a, b): a - b."""
    return [tuple(pair) for pair in results.get("statistics", {}).get("pairs", [])]


def pair_columns(pairs: Sequence[tuple]) -> List[str]:
    """Two columns per compared pair: the paired difference with its interval, its Holm-adjusted p."""
    return [name for a, b in pairs for name in (f"{a} - {b} [CI]", "Holm p" + (f" {a} - {b}" if len(pairs) > 1 else ""))]


def pair_cells(tests: Sequence[Mapping], pairs: Sequence[tuple]) -> List[Cell]:
    """A row's paired tests as read from its stored verdicts (never decided again): per pair,
    the difference a - b with its interval (bold when significant) and the adjusted p."""
    cells = []
    for a, b in pairs:
        test = next((t for t in tests if (t["a"], t["b"]) in ((a, b), (b, a))), None)
        if test is None:
            cells += [Cell(""), Cell("")]
            continue
        flip = (test["a"], test["b"]) == (b, a)
        low, high = test["ci"]
        difference, ci = (-test["difference"], [-high, -low]) if flip else (test["difference"], [low, high])
        adjusted = math.nan if test.get("p_adjusted") is None else test["p_adjusted"]
        cells += [Cell(math.nan if difference is None else difference,
                       None if low is None or high is None else ci, bool(test.get("significant")), signed=True),
                  Cell(adjusted, text=format_p(adjusted)[2:])]
    return cells


def pair_kinds(pairs: Sequence[tuple]) -> List[str]:
    return ["difference", "plain"] * len(pairs)


def _family(results: Mapping, name: str) -> str:
    """``; Holm over the 7 rows of the table (7 tests)``: the family a table's marks come from."""
    described = results.get("families", {}).get(name)
    return f" ({described['description']})" if described else ""


def _pairs_note(pairs: Sequence[tuple]) -> str:
    return f"; † n < {SMALL}" + ("; each compared pair: the paired difference a - b [interval] (bold when "
                                 "significant) and its Holm-adjusted p, as the report decided them" if pairs else "")


def _stored_tests(results: Mapping, method: str, key: str) -> List[Mapping]:
    return results.get("tests", {}).get(method, {}).get(key, {}).get("tests", [])


def _runs_note(results: Mapping) -> str:
    runs = results.get("runs", {})
    return "; systems with several runs: mean ± sample std over runs, intervals and tests on counts pooled " \
        "over runs" if runs else ""


def tables(results: Mapping) -> List[Table]:
    """The headline table and each method's subset table (values with their intervals, the
    significantly better system in bold, when the report resampled)."""
    summary = results["summary"]
    order = list(summary["systems"])
    systems = results["systems"]
    pairs = compared_pairs(results)
    kinds = ["plain", "plain"] + ["tested"] * len(order) + pair_kinds(pairs)
    headline = []
    for row in summary["rows"]:
        label = row["label"] + (f" ({row['bucket']})" if row.get("bucket") else "") \
            + {"high": " (↑)", "low": " (↓)"}.get(row.get("better"), " (·)")
        where = row.get("buckets", {})  # per system (older summaries)
        cells = [Cell(label), Cell(_n(results, row, order))]
        for s in order:
            value = row["values"][s]
            if where.get(s):
                value = f"{where[s]}: {_number(value, 4)}"
            cells.append(Cell(value, (row.get("ci") or {}).get(s), s in row.get("best", []), row.get("std", {}).get(s),
                              bool(row.get("small", {}).get(s))))
        headline.append(cells + pair_cells(row.get("tests", []), pairs))
    out = [Table("Headline: systems in the order given; bold: significantly better than every system it is "
                 "compared with"
                 f"{_family(results, 'headline')} (↑ higher, ↓ lower is better, · not ranked){_runs_note(results)}"
                 + _pairs_note(pairs), ["measure", "n"] + order + pair_columns(pairs), headline, "headline", kinds)]
    first = order[0]
    out.append(Table("HardEval: token error rate (TER) per subset; bold: significantly lower"
                     + _family(results, "HardEval subsets") + _pairs_note(pairs),
                     ["subset", "n"] + order + pair_columns(pairs),
                     [[Cell(x), Cell(systems[first]["hardeval"][f"n_{x}"])]
                      + [_tested(results, "hardeval", f"ter_{x}", s, systems[s]["hardeval"][f"ter_{x}"],
                                 systems[first]["hardeval"][f"n_{x}"]) for s in order]
                      + pair_cells(_stored_tests(results, "hardeval", f"ter_{x}"), pairs) for x in HARDEVAL_SUBSETS],
                     "hardeval", kinds))
    out.append(Table("Tough Mentions Recall per subset; bold: significantly higher" + _family(results, "TMR subsets")
                     + _pairs_note(pairs), ["subset", "n"] + order + pair_columns(pairs),
                     [[Cell(x), Cell(systems[first]["tmr"][f"n_{x}"])]
                      + [_tested(results, "tmr", f"recall_{x}", s, systems[s]["tmr"][f"recall_{x}"],
                                 systems[first]["tmr"][f"n_{x}"]) for s in order]
                      + pair_cells(_stored_tests(results, "tmr", f"recall_{x}"), pairs) for x in TMR_SUBSETS], "tmr",
                     kinds))
    bucket_rows = []
    for attribute in ATTRIBUTES:
        cells = {s: {_key(r["interval"]): r for r in results["details"][s]["bucket_f1"]["buckets"][attribute]}
                 for s in order}
        for index, interval in enumerate(dict.fromkeys(i for rows in cells.values() for i in rows)):
            gold = next((c[interval]["n_gold"] for c in cells.values() if interval in c), 0)
            key = bucket_key(attribute, index, interval)
            bucket_rows.append([Cell(attribute), Cell(bucket_label(attribute, list(interval) if isinstance(
                interval, tuple) else interval, totals(results))), Cell(gold)]
                + [_tested(results, "bucket_f1", key, s, cells[s].get(interval, {}).get("f1", math.nan), gold)
                   for s in order] + pair_cells(_stored_tests(results, "bucket_f1", key), pairs))
    out.append(Table("Bucket F1 per attribute bucket (n: gold entities); bold: significantly better"
                     + _family(results, "bucket F1 table") + _pairs_note(pairs),
                     ["attribute", "bucket", "n"] + order + pair_columns(pairs), bucket_rows, "buckets",
                     ["plain"] + kinds))
    out.append(per_type_table(results))
    with_nrb = [s for s in order if "nrb" in systems[s]]
    if with_nrb:
        out.append(Table("Name Regularity Bias: accuracy on NRB and WTS", ["set", "n"] + with_nrb,
                         [[Cell(part.upper()), Cell(systems[with_nrb[0]]["nrb"].get(f"{part}_n", ""))]
                          + [Cell(systems[s]["nrb"].get(f"{part}_accuracy", math.nan)) for s in with_nrb]
                          for part in ("nrb", "wts")], "nrb"))
    curves = results.get("attack_curve", {})
    if curves:
        rows = []
        for name, curve in curves.items():
            n = systems[name]["rockner"].get("n_attacked", "")
            rows += [[Cell(name), Cell(point["set"]), Cell(n), Cell(point["f1_attacked"]), Cell(point["f1_drop"]),
                      Cell(point["f1_drop_relative"])] for point in curve]
        out.append(Table("RockNER: F1 on attacked test sets (n: gold entities of the last set)",
                         ["system", "attacked set", "n", "F1", "drop", "relative drop"], rows, "rockner"))
    return out


def per_type_table(results: Mapping) -> Table:
    """Precision, recall and F1 of each type with their intervals (``report.per_type_rows``),
    F1 in bold where the bucket F1 table's verdict says a system is significantly better."""
    from .report import per_type_rows

    order = list(results["summary"]["systems"])
    typed = per_type_rows(results)
    rows = []
    for precision, recall, f1 in zip(typed[0::3], typed[1::3], typed[2::3]):
        cells = [Cell(f1["type"]), Cell(f1["n"][order[0]])]
        for s in order:
            cells += [Cell(precision["n"][s])] + [
                Cell(row["values"][s], row["ci"].get(s), s in row["best"], small=row["small"][s])
                for row in (precision, recall, f1)]
        rows.append(cells)
    return Table("Precision, recall and F1 per type (strict spans; n: gold entities of the type, n predicted: the "
                 "system's); bold: F1 significantly better" + _family(results, "bucket F1 table")
                 + "; precision and recall are not tested" + _pairs_note(()),
                 ["type", "n"] + [f"{s} {c}" for s in order for c in ("n predicted", "precision", "recall", "F1")],
                 rows, "per-type", ["plain", "plain"] + ["plain", "value", "value", "tested"] * len(order))


def _key(interval):
    return interval if isinstance(interval, str) else tuple(interval)


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "↑": r"$\uparrow$",
          "↓": r"$\downarrow$", "≥": r"$\geq$", "≤": r"$\leq$", "–": "--", "−": "$-$", "…": r"\ldots{}",
          "×": r"$\times$", "·": r"$\cdot$", "†": r"\dag{}", "<": r"\textless{}",
          ">": r"\textgreater{}", "|": r"\textbar{}", "\n": " ", "\r": " "}


def latex_escape(text: str) -> str:
    # "{}" before a leading "[": after a row's \\ it would be read as the row's spacing argument
    return ("{}" if text.startswith("[") else "") + "".join(_LATEX.get(ch, ch) for ch in text)


_MARKDOWN = {"&": "&amp;", "<": "&lt;", "\\": "\\\\", "|": "\\|", "[": "\\[", "]": "\\]", "`": "\\`",
             "\n": " ", "\r": " "}


def markdown_escape(text: str) -> str:
    """Text shown as typed in Markdown (GitHub's, CommonMark): see the module docstring."""
    return "".join(_MARKDOWN.get(ch, ch) for ch in text)


def latex(results: Mapping, digits: int = 4) -> str:
    """Every table as a LaTeX ``table`` with booktabs rules (``\\usepackage{booktabs}``)."""
    return latex_tables(tables(results), digits)


def latex_tables(tables_: Sequence[Table], digits: int = 4) -> str:
    """Tables as LaTeX ``table`` environments with booktabs rules."""
    blocks = []
    for table in tables_:
        spec = "l" * (2 if table.label in ("buckets", "rockner") else 1)
        spec += "r" * (len(table.columns) - len(spec))
        lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_escape(table.title)}}}",
                 rf"\label{{tab:tough-ner-{table.label}}}", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
                 " & ".join(latex_escape(c) for c in table.columns) + r" \\", r"\midrule"]
        for row in table.rows:
            cells = []
            for cell in row:
                text = latex_escape(_cell_text(cell, digits))
                cells.append(rf"\textbf{{{text}}}" if cell.bold else text)
            lines.append(" & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        blocks.append("\n".join(lines))
    return "% tough-ner tables; needs \\usepackage{booktabs}\n" + "\n\n".join(blocks) + "\n"


def markdown(results: Mapping, digits: int = 4) -> str:
    """Every table as a Markdown (GitHub) table under a heading."""
    return markdown_tables(tables(results), digits)


def markdown_tables(tables_: Sequence[Table], digits: int = 4) -> str:
    """Tables as Markdown (GitHub) tables, each under a heading."""
    blocks = []
    for table in tables_:
        lines = [f"### {markdown_escape(table.title)}", "",
                 "| " + " | ".join(map(markdown_escape, table.columns)) + " |",
                 "|" + "|".join(":---" if i == 0 else "---:" for i in range(len(table.columns))) + "|"]
        for row in table.rows:
            texts = [_cell_text(cell, digits, markdown_escape) for cell in row]
            lines.append("| " + " | ".join(f"**{t}**" if cell.bold else t for t, cell in zip(texts, row)) + " |")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


# What a column of each kind adds beside its value in CSV: its interval's bounds, a value's
# sample std over runs (only when some cell has one), its small-n mark and whether it is in bold
# (a tested value: significantly better; a difference: significant).
CSV_FIELDS = {"plain": (), "value": ("low", "high", "std", "small"), "tested": ("low", "high", "std", "small", "best"),
              "difference": ("low", "high", "significant")}


def _csv_value(value):
    """A number as a number (NaN as an empty cell); text, and True / False, as they are."""
    return None if isinstance(value, float) and math.isnan(value) else value


def csv_table(table: Table) -> str:
    """A table as CSV (``formatting.csv_text``: formula-like text neutralised, numbers as
    numbers): a column per field of ``CSV_FIELDS``, named ``SYSTEM low``, ``SYSTEM best``, ...
    (a pair's difference column without its `` [CI]``); the title is not written."""
    kinds = table.kinds or ["plain"] * len(table.columns)
    header, fields = [], []
    for j, (name, kind) in enumerate(zip(table.columns, kinds)):
        name = name[:-len(" [CI]")] if name.endswith(" [CI]") else name
        extra = [f for f in CSV_FIELDS[kind] if f != "std" or any(row[j].std is not None for row in table.rows)]
        header += [name] + [f"{name} {field}" for field in extra]
        fields.append(extra)
    rows = []
    for row in table.rows:
        out = []
        for cell, extra in zip(row, fields):
            known = cell.ci is not None and not any(v is None or math.isnan(v) for v in cell.ci)
            low, high = (float(cell.ci[0]), float(cell.ci[1])) if known else (None, None)
            marks = {"low": low, "high": high, "std": cell.std, "small": cell.small, "best": cell.bold,
                     "significant": cell.bold}
            out += [_csv_value(cell.value)] + [_csv_value(marks[field]) for field in extra]
        rows.append(out)
    return csv_text(header, rows)


# Every table's label, as ``tables`` gives them (NRB and RockNER only when the report has them):
# the CSV files a --csv folder may get, which the commands check against their inputs first.
LABELS = ("headline", "hardeval", "tmr", "buckets", "per-type", "nrb", "rockner")


def csv_files(results: Mapping) -> Dict[str, str]:
    """Every table as CSV (``csv_table``), by file name: ``headline.csv``, ``hardeval.csv``, ..."""
    return {f"{table.label}.csv": csv_table(table) for table in tables(results)}


def write(results: Mapping, path, fmt: str) -> None:
    """Write ``latex`` or ``markdown`` tables to the file ``path``, or ``csv`` tables into the
    folder ``path`` (``csv_files``), each file atomically."""
    import os

    from .._util import write_atomic

    if fmt == "csv":
        os.makedirs(path, exist_ok=True)
        for name, text in csv_files(results).items():
            write_atomic(os.path.join(path, name), text)
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_atomic(path, {"latex": latex, "markdown": markdown}[fmt](results))
