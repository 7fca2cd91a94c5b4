"""Study benchmark: 2 datasets x 3 systems x 3 seeds with intervals, against the 2 reports it
replaces.

    python bench/bench_study.py [CONLL_DIR] [--quick] [--save]

Datasets: CoNLL-2003 train -> test and train -> dev (each of test-set size).  Systems: the
gold tags with seeded errors at three error rates, three seeds each (nine prediction files
per dataset).  Whole jobs, fresh processes: ``tough-ner study`` (study and both datasets'
reports as JSON and HTML, the cross-dataset tables as HTML, JSON, Markdown and LaTeX) against
``tough-ner report --json --html`` run once per dataset on the same files, 1,000 resamples.
The goal is on one core (CPU seconds, the study run with one worker); the speed-up of two
workers is the study's wall time with one worker over its wall time with two.
"""
from __future__ import annotations

import os
import sys
import tempfile

from tough_ner.core.corpus import read_conll, write_conll

from bench_report import noisy_gold
from common import DATA, Goal, print_table, print_verdicts, quick, run_process

SYSTEMS = {"low-noise": (0.05, 0.05), "mid-noise": (0.1, 0.1), "high-noise": (0.2, 0.1)}  # (drop, retype)


def main():
    resamples = 20 if quick() else 1000
    seeds = 2 if quick() else 3  # --quick only checks that it runs: fewer files, no HTML
    systems = dict(list(SYSTEMS.items())[:2]) if quick() else SYSTEMS
    html = [] if quick() else ["--html"]
    sets = {"test": DATA / "test.txt", "dev": DATA / ("dev.txt" if (DATA / "dev.txt").exists() else "test.txt")}
    with tempfile.TemporaryDirectory() as folder:
        lines = [f"[options]\nresamples = {resamples}\n"]
        reports = []
        for name, path in sets.items():
            corpus = read_conll(path)
            lines.append(f'[[datasets]]\nname = "{name}"\ntrain = "{DATA / "train.txt"}"\ntest = "{path}"\n')
            preds = []
            for system, (drop, retype) in systems.items():
                for seed in range(seeds):
                    file = os.path.join(folder, f"{name}-{system}-{seed}.conll")
                    write_conll(file, corpus.tokens, corpus.tags, noisy_gold(corpus.tags, seed, drop, retype))
                    preds.append((system, file))
            reports.append([sys.executable, "-m", "tough_ner.cli", "report", "--train", str(DATA / "train.txt"),
                            "--test", str(path), *[a for s, f in preds for a in ("--pred", f"{s}={f}")],
                            "--json", f"{folder}/{name}.json", *html, *[f"{folder}/{name}.html"][:len(html)], "--quiet",
                            "--resamples", str(resamples)])
        for system in systems:
            lines.append(f"[systems.{system}]")
            for name in sets:
                runs = [repr(os.path.join(folder, f"{name}-{system}-{seed}.conll")) for seed in range(seeds)]
                lines.append(f"{name} = [{', '.join(runs)}]")
        spec = os.path.join(folder, "study.toml")
        with open(spec, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines))
        study = [sys.executable, "-m", "tough_ner.cli", "study", spec, "--out", f"{folder}/out", "--quiet"]
        one = run_process(study + ["--workers", "1"], 3)
        two = run_process(study + ["--workers", "2"], 3)
        singles = [run_process(command, 3) for command in reports]
    replaced = sum(r.cpu for r in singles)
    print(f"{DATA}: train -> test and train -> dev; {len(systems)} systems x {seeds} seeds; {resamples} resamples; "
          "CPU seconds of whole jobs (best of 3) unless stated")
    print_table([
        ("the 2 reports it replaces: report --json --html, CPU, summed", replaced, ""),
        ("  report on test", singles[0].cpu, ""),
        ("  report on dev", singles[1].cpu, ""),
        ("tough-ner study, 1 worker: CPU", one.cpu, ""),
        ("  ratio to the 2 reports", one.cpu / replaced, Goal("<= 1.2", 1.2)),
        ("  its wall time", one.wall, ""),
        ("  its peak RSS (MB)", one.peak_mb, ""),
        ("tough-ner study, 2 workers: wall", two.wall, ""),
        ("  speed-up of 2 workers (wall, 1 worker / 2 workers)", one.wall / two.wall, ""),
        ("  its peak RSS of the main process (MB)", two.peak_mb, ""),
    ], 66)
    print_verdicts()


if __name__ == "__main__":
    main()
