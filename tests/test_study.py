"""Studies (present/study.py, ``tough-ner study``): a study is the reports it contains, plus
cross-dataset tables that only read them."""
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from study_data import make_study, toml
from tough_ner.cli import main
from tough_ner.core.corpus import Corpus, read_conll
from tough_ner.core.stats import TrainStats
from tough_ner.core.uncertainty import aggregate_runs
from tough_ner.methods.buckets import attribute_wise
from tough_ner.present import study as st
from tough_ner.present.formatting import to_json
from tough_ner.present.report import run


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("study")
    spec = make_study(path)
    (path / "study.toml").write_text(toml(spec), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def result(folder):
    return st.study(folder / "study.toml")


def _report(folder: Path, dataset: str, systems: dict, resamples: int = 200, **options) -> dict:
    """The report of one dataset run on its own, as a user would: statistics, test set, the
    systems' prediction files in the study's order (``options``: report.run's, the decoding
    ones for the statistics too)."""
    test = read_conll(folder / f"{dataset}-test.conll")
    names, predictions = [], []
    for system, by_dataset in systems.items():
        for path in by_dataset.get(dataset, ()):
            names.append(system)
            predictions.append(read_conll(folder / path, n_predictions=1).predictions[0])
    decoding = {key: options[key] for key in ("scheme", "mode", "repair") if key in options}
    stats = TrainStats.coerce(str(folder / f"{dataset}-train.conll"), **decoding)
    return run(stats, Corpus(test.tokens, test.tags, predictions, test.path, test.documents), names=names,
               bootstrap=resamples, seed=0, **options)


def test_a_study_holds_each_dataset_report_key_for_key(folder, result):
    spec = st.load_spec(folder / "study.toml")
    for dataset in ("demo", "deportes"):
        assert to_json(result["datasets"][dataset]) == to_json(_report(folder, dataset, spec.systems))


def test_the_study_does_not_depend_on_the_number_of_processes(folder, result):
    assert to_json(st.study(folder / "study.toml", workers=2)) == to_json(result)


def test_runs_are_aggregated_as_aggregate_runs_does(folder, result):
    spec = st.load_spec(folder / "study.toml")
    row = next(r for r in result["study"]["headline"] if r["label"] == "F1")
    for dataset in ("demo", "deportes"):
        single = [_report(folder, dataset, {"contextual": {dataset: [path]}}, resamples=0)
                  for path in spec.systems["contextual"][dataset]]
        expected = aggregate_runs([r["systems"]["contextual"]["tmr"] for r in single])["f1"]
        cell = row["cells"]["contextual"][dataset]
        assert cell["runs"] == 2
        assert cell["value"] == pytest.approx(expected["mean"], abs=1e-12)
        assert cell["std"] == pytest.approx(expected["std"], abs=1e-12)
        assert math.isnan(row["cells"]["memorizer"][dataset]["std"])  # one run: no std


def test_the_cross_dataset_headline_reads_each_dataset_verdicts(result):
    for row in result["study"]["headline"]:
        for dataset, results in result["datasets"].items():
            stored = next(r for r in results["summary"]["rows"] if r["label"] == row["label"])
            for system, cells in row["cells"].items():
                cell = cells[dataset]
                assert cell["value"] == stored["values"][system] or (math.isnan(cell["value"]) and math.isnan(
                    stored["values"][system]))
                assert cell["best"] == (system in stored["best"])
                assert cell["verdicts"] == [t for t in stored["tests"] if system in (t["a"], t["b"])]


def test_the_pooled_verdict_is_the_inverse_variance_mean_of_the_datasets_differences():
    # hand computation: differences 0.10 and 0.02 with 95% intervals of half-width 0.05 and 0.01
    z = 1.959963984540054
    tests = [({"a": "A", "b": "B", "difference": 0.10, "ci": [0.05, 0.15], "p_value": 0.001}, False),
             ({"a": "B", "b": "A", "difference": -0.02, "ci": [-0.03, -0.01], "p_value": 0.001}, True)]
    pooled = st.pooled_test(tests, "A", "B", 0.95)
    w1, w2 = (z / 0.05) ** 2, (z / 0.01) ** 2
    mean = (w1 * 0.10 + w2 * 0.02) / (w1 + w2)
    error = 1 / math.sqrt(w1 + w2)
    assert pooled["difference"] == pytest.approx(mean)
    assert pooled["ci"] == pytest.approx([mean - z * error, mean + z * error])
    assert pooled["p_value"] == pytest.approx(math.erfc(abs(mean / error) / math.sqrt(2)))
    assert pooled["datasets"] == 2
    # a dataset whose systems never differ carries no weight; none left: no test
    flat = [({"a": "A", "b": "B", "difference": 0.0, "ci": [0.0, 0.0], "p_value": 1.0}, False)]
    assert math.isnan(st.pooled_test(flat, "A", "B", 0.95)["p_value"])


def test_pooled_verdicts_are_one_holm_family_and_name_their_test(result):
    tests = [t for row in result["study"]["headline"] for t in row["tests"]]
    m = sum(not math.isnan(t["p_value"]) for t in tests)
    assert m > 0 and all(t["m"] == m and t["family"] == "pooled across datasets" for t in tests)
    assert all(t["test"] == st.POOLED_TEST for t in tests)
    for t in tests:
        assert t["significant"] == (t["p_adjusted"] < 0.05)
        assert t["p_adjusted"] >= t["p_value"] or math.isnan(t["p_value"])


def _buckets(f1s):
    return [{"interval": [i, i], "f1": f} for i, f in enumerate(f1s)]


def test_model_wise_and_attribute_wise_against_a_hand_computed_fixture():
    from tough_ner.methods.buckets import ATTRIBUTES

    rising, falling, flat = [0.2, 0.4, 0.6, 0.8], [0.9, 0.7, 0.8, 0.1], [0.5, 0.5, math.nan, 0.5]
    def details(f1s):
        buckets = {a: _buckets(f1s) for a in ATTRIBUTES}
        zeta = {a: 0.25 for a in ATTRIBUTES[:-1]}
        return {"bucket_f1": {"buckets": buckets, "diagnostics": {"zeta": zeta}}}
    datasets = {"d": {"details": {"A": details(rising), "B": details(falling)}},
                "e": {"details": {"A": details(flat)}}}
    model = st.model_wise_table(datasets, ["A", "B"], 0.05)
    a, b = model["table"]["A"]["d"]["eLen"], model["table"]["B"]["d"]["eLen"]
    assert a["spearman"] == pytest.approx(1.0) and a["std"] == pytest.approx(np.std(rising))
    # ranks of falling: 4, 2, 3, 1 against 1..4: d^2 = 9 + 0 + 0 + 9 -> rho = 1 - 6*18/60 = -0.8
    assert b["spearman"] == pytest.approx(-0.8)
    assert a["p_value"] == pytest.approx(2 / 24)  # the two perfect orders out of 4!
    # |rho| >= 0.8: the orders with sum d^2 <= 2 or >= 38: 1 + 3 each side -> 8 of 24
    assert b["p_value"] == pytest.approx(8 / 24)
    assert math.isnan(model["table"]["A"]["e"]["eLen"]["p_value"])  # ties: no exact test
    assert model["table"]["A"]["d"]["tag"]["spearman"] != model["table"]["A"]["d"]["tag"]["spearman"]  # unordered
    assert not any(c["significant"] for s in model["table"].values() for d in s.values() for c in d.values())
    assert "at most 4 non-empty buckets the smallest possible two-sided p is 0.083" in model["note"]
    table = st.attribute_wise_table(datasets, model["table"], ["A", "B"])
    assert table["d"]["eLen"] == {"zeta": 0.25, "rho": pytest.approx(0.9)}
    assert table["e"]["eLen"]["rho"] != table["e"]["eLen"]["rho"]  # constant F1: no correlation


def test_attribute_wise_equals_the_buckets_helper_for_single_runs(result):
    # deportes' memorizer has one run, so its diagnostics are the ones bucket_f1 computed
    results = result["datasets"]["deportes"]
    study_rho = st.attribute_wise_table({"deportes": results}, {"memorizer": {"deportes": st.model_wise(
        results["details"]["memorizer"]["bucket_f1"]["buckets"])}}, ["memorizer"])["deportes"]
    helper = attribute_wise([results["details"]["memorizer"]["bucket_f1"]])
    for attribute, cell in helper.items():
        assert study_rho[attribute]["zeta"] == cell["zeta"]
        assert study_rho[attribute]["rho"] == pytest.approx(cell["rho"], nan_ok=True)


def test_hardeval_across_domains_has_each_report_on_its_diagonal(result):
    domains = result["study"]["hardeval_domains"]
    for dataset, results in result["datasets"].items():
        for system in ("memorizer",):  # one run: the report's own value
            assert domains[dataset][dataset][system]["hardeval"] == pytest.approx(
                results["systems"][system]["hardeval"]["hardeval"], nan_ok=True)
    other = domains["deportes"]["demo"]["memorizer"]
    assert other["n_unseen"] > domains["deportes"]["deportes"]["memorizer"]["n_unseen"]  # Spanish is unseen in demo


def test_tmr_per_language(result):
    languages = result["study"]["tmr_languages"]
    assert set(languages) == {"en", "es"}
    assert languages["es"]["systems"]["memorizer"]["recall_seen"] == \
        result["datasets"]["deportes"]["systems"]["memorizer"]["tmr"]["recall_seen"]


def test_the_command_writes_the_study_and_each_dataset_report(folder, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["study", str(folder / "study.toml"), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "F1" in printed and "wrote" in printed
    for name in ("study.json", "study.html", "study.md", "study.tex", "demo/report.json", "deportes/report.html",
                 "deportes/report-errors.csv"):
        assert (out / name).stat().st_size > 0
    made = json.loads((out / "study.json").read_text())["provenance"]
    assert made["command"] == ["tough-ner", "study", str(folder / "study.toml"), "--out", str(out), "--quiet"]
    assert json.loads((out / "demo/report.json").read_text())["provenance"] == made
    tex = (out / "study.tex").read_text()
    assert r"\multicolumn{3}{c}{demo}" in tex and r"\multicolumn{3}{c}{deportes}" in tex
    rows = {line.split(" & ")[0]: line for line in tex.splitlines() if " & " in line}
    cells = rows["contextual"].rstrip(" \\").split(" & ")[1:]
    # two runs: mean ± std in every cell that has a value
    assert len(cells) == 6 and sum(r"$\pm$" in c for c in cells) == sum(c != "--" for c in cells) >= 5
    assert "pm" not in rows["memorizer"]
    # the dataset report is the report command's, key for key
    report = tmp_path / "demo.json"
    spec = st.load_spec(folder / "study.toml")
    preds = [f"{s}={folder / p}" for s, by in spec.systems.items() for p in by["demo"]]
    assert main(["report", "--train", str(folder / "demo-train.conll"), "--test", str(folder / "demo-test.conll"),
                 *sum((["--pred", p] for p in preds), []), "--json", str(report), "--resamples", "200",
                 "--quiet"]) == 0
    assert json.loads(report.read_text())["results"] == json.loads((out / "demo/report.json").read_text())["results"]


def _rename_demo(spec, name):
    spec["datasets"][0]["name"] = name
    for runs in spec["systems"].values():
        runs[name] = runs.pop("demo")


@pytest.mark.parametrize("change, message", [
    (lambda s: s["systems"]["memorizer"].update(nowhere=["x.conll"]), "unknown dataset"),
    (lambda s: s["datasets"].append(dict(s["datasets"][0])), "names given twice"),
    (lambda s: s["options"].update(resample=3), "unknown option"),
    (lambda s: s["datasets"][0].pop("test"), "needs name, train and test"),
    (lambda s: s["options"].update(scheme="IOB3"), "options: scheme='IOB3'"),
    (lambda s: s["options"].update(mode="strict"), "options: mode='strict' needs a declared scheme"),
    (lambda s: s["options"].update(beta=0), "options: beta"),
    (lambda s: s["options"].update(resamples="100"), "options: resamples must be a whole number >= 0, got '100'"),
    (lambda s: s["options"].update(seed=-1), "options: seed must be a whole number >= 0, got -1"),
    (lambda s: s["options"].update(attack_seed=True), "options: attack_seed must be a whole number"),
    (lambda s: s["options"].update(confidence="0.9"), "options: confidence must lie in \\(0, 1\\)"),
    (lambda s: s["options"].update(unit="word"), "options: unit='word'"),
    (lambda s: s["options"].update(cache=3), "options: cache must be true, false or a folder, got 3"),
    (lambda s: s["datasets"].append({**s["datasets"][0], "name": "DEMO"}), "would share the folder"),
    (lambda s: _rename_demo(s, "study.html"), "dataset 'study.html': its folder 'study.html' would "
                                                           "clash with the study's own file study.html"),
    (lambda s: _rename_demo(s, "Study.JSON"), "would clash with the study's own file study.json"),
])
def test_a_wrong_study_is_refused_by_name(folder, change, message):
    spec = make_study(folder)
    change(spec)
    with pytest.raises(ValueError, match=message):
        st.spec_of(spec, str(folder))


def test_a_cache_folder_is_an_option_a_study_takes(folder):
    spec = make_study(folder)
    spec["options"]["cache"] = "predictions"  # a folder of its own, as evaluate(cache=...) takes
    assert st.spec_of(spec, str(folder)).options["cache"] == "predictions"


def test_an_option_of_the_wrong_type_names_the_file_and_the_option(folder, tmp_path, capsys):
    spec = make_study(folder)
    spec["options"]["resamples"] = "100"
    path = tmp_path / "s5.toml"
    path.write_text(toml(spec), encoding="utf-8")
    assert main(["study", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert capsys.readouterr().err == (f"tough-ner study: {path}: options: resamples must be a whole number >= 0, "
                                       "got '100'\n")


def test_a_dataset_named_as_a_study_file_is_refused_before_anything_is_written(folder, tmp_path, capsys):
    spec = make_study(folder)
    _rename_demo(spec, "study.html")
    path = tmp_path / "clash.toml"
    path.write_text(toml(spec).replace("\nstudy.html = ", '\n"study.html" = '), encoding="utf-8")  # a dotted key else
    out = tmp_path / "out"
    assert main(["study", str(path), "--out", str(out), "--quiet"]) == 2
    assert "dataset 'study.html': its folder 'study.html' would clash with the study's own file study.html" in \
        capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("suffix, text", [(".toml", "[options]\nmethods = " + "[" * 100_000),
                                          (".yaml", "options:\n  methods: " + "[" * 100_000)])
def test_a_study_file_nested_too_deeply_is_one_line(tmp_path, capsys, suffix, text):
    if suffix == ".yaml":
        pytest.importorskip("yaml")
    path = tmp_path / f"deep{suffix}"
    path.write_text(text, encoding="utf-8")
    assert main(["study", str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (f"tough-ner study: {path}: nested too deeply (lists or tables inside each "
                                       "other beyond Python's recursion limit)\n")


def test_a_prediction_file_of_another_test_set_is_refused_naming_it(folder):
    spec = make_study(folder)
    spec["systems"]["memorizer"]["demo"] = spec["systems"]["memorizer"]["deportes"]
    with pytest.raises(ValueError, match="deportes-memorizer.conll does not hold the tokens and gold tags"):
        st.study(st.spec_of(spec, str(folder)))


def test_models_in_a_study_run_on_the_test_and_attacked_sets_as_evaluate_does(folder):
    from tough_ner.present.evaluation import evaluate_model

    models = {"capitalised": "study_data:capitalised", "nothing": "study_data:nothing"}
    spec = {"datasets": [{"name": "demo", "train": "demo-train.conll", "test": "demo-test.conll",
                          "attacks": ["typo", "case"]}],
            "systems": {name: {"demo": [{"model": model}]} for name, model in models.items()},
            "options": {"resamples": 100, "cache": False}}
    result = st.study(st.spec_of(spec, str(folder)))
    expected = evaluate_model(list(models.values()), str(folder / "demo-test.conll"),
                              str(folder / "demo-train.conll"), names=list(models), attacks=["typo", "case"],
                              cache=False, bootstrap=100)
    expected.pop("models")
    assert to_json(result["datasets"]["demo"]) == to_json(expected)
    assert [p["set"] for p in result["datasets"]["demo"]["attack_curve"]["nothing"]] == ["typo 1", "case lower"]


def test_a_model_beside_prediction_files_runs_on_the_test_set(folder):
    spec = make_study(folder)
    spec["systems"]["capitalised"] = {"demo": [{"model": "study_data:capitalised"}]}
    spec["options"]["cache"] = False
    result = st.study(st.spec_of(spec, str(folder)))
    assert result["datasets"]["demo"]["summary"]["systems"] and "capitalised" in result["datasets"]["demo"]["systems"]
    assert "capitalised" not in result["datasets"]["deportes"]["systems"]
    row = next(r for r in result["study"]["headline"] if r["label"] == "F1")
    assert set(row["cells"]["capitalised"]) == {"demo"}
    spec["datasets"][0]["attacks"] = ["typo"]
    with pytest.raises(ValueError, match="need every run of the dataset to be a model"):
        st.study(st.spec_of(spec, str(folder)))


def test_a_study_on_a_dask_cluster_equals_the_one_process_study(folder, result, process_cluster):
    distributed = pytest.importorskip("distributed")
    with distributed.Client(process_cluster) as client, distributed.get_task_stream(client) as stream:
        assert to_json(st.study(folder / "study.toml", client=client)) == to_json(result)
    assert sum(str(task["key"]).startswith("_run_elsewhere") for task in stream.data) == 2  # a task per dataset


def _written(out: Path) -> dict:
    """Every file a study command wrote, by its path under ``out``, the JSON ones without
    their provenance (the command line, the time) and the pages without their footer of it."""
    files = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".json":
                text = {k: v for k, v in json.loads(text).items() if k != "provenance"}
            elif path.suffix == ".html":
                text = [line for line in text.splitlines() if not line.startswith("<footer id='provenance'>")]
            files[str(path.relative_to(out))] = text
    return files


def test_the_command_runs_a_study_on_a_dask_cluster(folder, tmp_path, capsys, process_cluster):
    """``tough-ner study --dask SCHEDULER``: the datasets run on the cluster's worker processes,
    the command writes the same files as in one process; --workers with --dask is refused."""
    distributed = pytest.importorskip("distributed")
    one, dask = tmp_path / "one", tmp_path / "dask"
    assert main(["study", str(folder / "study.toml"), "--out", str(one), "--quiet"]) == 0
    with distributed.Client(process_cluster) as client, distributed.get_task_stream(client) as stream:
        assert main(["study", str(folder / "study.toml"), "--out", str(dask), "--quiet",
                     "--dask", process_cluster.scheduler_address]) == 0
    assert sum(str(task["key"]).startswith("_run_elsewhere") for task in stream.data) == 2  # on the cluster's workers
    written = _written(dask)
    assert "study.json" in written and "deportes/report-errors.csv" in written and written == _written(one)
    made = json.loads((dask / "study.json").read_text())["provenance"]["command"]
    assert made[-2:] == ["--dask", process_cluster.scheduler_address]
    capsys.readouterr()
    assert main(["study", str(folder / "study.toml"), "--out", str(tmp_path / "limited"), "--max-line-bytes", "10",
                 "--dask", process_cluster.scheduler_address]) == 2  # the command's read limits, on the workers
    assert "longer than the line limit of 10 bytes" in capsys.readouterr().err and not (tmp_path / "limited").exists()
    for workers in ("2", "1"):
        with pytest.raises(SystemExit) as refused:
            main(["study", str(folder / "study.toml"), "--workers", workers, "--dask", process_cluster.scheduler_address])
        assert refused.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


_SETTINGS_RUN = []  # the workers' calls of the memory setting (a module's list: client.run pickles by name)


def _record_setting():
    _SETTINGS_RUN.append(1)


def test_study_dask_gives_the_workers_the_command_memory_setting(folder, tmp_path, monkeypatch):
    """As ``stats --dask``: run as the command, each worker gets the command's memory setting;
    called from Python, the workers are left as they are."""
    distributed = pytest.importorskip("distributed")
    from tough_ner.cli import _parser, _process
    from tough_ner.cli.study import cmd_study

    monkeypatch.setattr(_process, "keep_freed_memory", _record_setting)
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1, dashboard_address=None) \
            as cluster:
        for as_command, expected in ((False, []), (True, [1, 1])):
            argv = ["study", str(folder / "study.toml"), "--out", str(tmp_path / str(as_command)), "--quiet",
                    "--dask", cluster.scheduler_address]
            args = _parser(argv).parse_args(argv)
            args.as_command = as_command
            cmd_study(args)
            assert _SETTINGS_RUN == expected  # once on each of the 2 workers (threads of this process here)
    _SETTINGS_RUN.clear()


@pytest.mark.parametrize("command", ["study", "stats"])
def test_dask_without_an_address_or_the_extra_is_one_line(folder, tmp_path, capsys, monkeypatch, command):
    args = ["study", str(folder / "study.toml"), "--out", str(tmp_path / "out")] if command == "study" else \
        ["stats", "--train", str(folder / "demo-train.conll"), "--out", str(tmp_path / "s.npz")]
    assert main([*args, "--dask", " "]) == 2
    assert capsys.readouterr().err.strip() == f"tough-ner {command}: --dask needs the scheduler's address " \
                                              "(e.g. tcp://host:8786)"
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)  # the dask extra not installed
    assert main([*args, "--dask", "tcp://127.0.0.1:8786"]) == 2
    assert capsys.readouterr().err.strip() == f"tough-ner {command}: --dask needs the dask extra: pip install " \
                                              "'tough-ner[dask]'"
    assert not list(tmp_path.iterdir())


def test_the_input_warnings_of_datasets_run_elsewhere_are_raised_by_the_caller(tmp_path, capsys, process_cluster):
    """A dataset run in a pool's process or on a Dask worker hands its input warnings back,
    and the study's caller raises them, as in one process (a worker's own stderr or log is
    nothing the person reads); the command prints them."""
    import warnings

    import distributed

    from tough_ner.checks import InputWarning

    spec = make_study(tmp_path)
    for runs in spec["systems"].values():  # every run of deportes predicts a type known nowhere: a warning each
        for path in runs["deportes"]:
            lines = (tmp_path / path).read_text(encoding="utf-8").splitlines()
            first = next(k for k, line in enumerate(lines) if line and line.split()[-1] != "O")
            lines[first] = " ".join(lines[first].split()[:-1] + ["B-FOO"])
            (tmp_path / path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "study.toml").write_text(toml(spec), encoding="utf-8")

    def raised(**where):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = st.study(tmp_path / "study.toml", **where)
        return to_json(result), sorted(str(w.message) for w in caught if w.category is InputWarning)

    alone = raised()
    assert alone[1] and all(m.startswith("predicted entity types absent from the gold or training data: FOO (1 span")
                            for m in alone[1])
    assert raised(workers=2) == alone
    with distributed.Client(process_cluster) as client:
        assert raised(client=client) == alone
    capsys.readouterr()
    assert main(["study", str(tmp_path / "study.toml"), "--out", str(tmp_path / "out"), "--quiet",
                 "--dask", process_cluster.scheduler_address]) == 0
    printed = capsys.readouterr().err
    assert all(f"tough-ner study: warning: {message}" in printed for message in alone[1])


def test_a_dataset_failing_elsewhere_still_gives_its_input_warnings(monkeypatch):
    """The input warnings a dataset gave before it failed travel on its error (pickled with it)
    and are given before the error is raised; a caller that collects input warnings collects
    those of datasets run elsewhere too."""
    import pickle

    from tough_ner.checks import InputWarning, collected_input_warnings, warn_input

    def failing(spec, index):
        warn_input("a note")
        raise ValueError("broken")

    monkeypatch.setattr(st, "run_dataset", failing)
    with pytest.raises(ValueError, match="broken") as error:
        st._run_elsewhere(None, 0)
    travelled = pickle.loads(pickle.dumps(error.value))
    assert travelled.input_warnings == ["a note"]

    def outcomes():
        yield {"part": 1}, ["first"]
        raise travelled

    with pytest.warns(InputWarning) as caught, pytest.raises(ValueError, match="broken"):
        list(st._delivered(outcomes()))
    assert [str(w.message) for w in caught] == ["first", "a note"]
    with collected_input_warnings() as notes:
        assert list(st._delivered([({"part": 1}, ["x", "x"])])) == [{"part": 1}]
    assert notes == ["x", "x"]


def test_a_yaml_study_reads_as_the_toml_one(folder):
    yaml = pytest.importorskip("yaml")
    spec = make_study(folder)
    (folder / "study.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    assert st.load_spec(folder / "study.yaml") == st.load_spec(folder / "study.toml")


def test_self_diagnosis_names_the_worst_bucket_of_the_f1_the_report_shows(result):
    from tough_ner.methods.buckets import self_diagnosis
    from tough_ner.present.labels import bucket_label, totals

    for dataset, results in result["datasets"].items():
        for system, details in results["details"].items():
            buckets = details["bucket_f1"]["buckets"]
            for attribute, cell in result["study"]["diagnosis"][dataset]["self"][system].items():
                expected = self_diagnosis(buckets)[attribute]
                assert cell["worst_f1"] == expected["worst_f1"]
                worst = buckets[attribute][expected["worst"]]["interval"]
                assert cell["worst_bucket"] == bucket_label(attribute, worst, totals(results))


def test_the_methods_option_chooses_the_tables_a_study_shows(folder, result):
    spec = make_study(folder)
    spec["options"]["methods"] = ["tmr"]
    shown = st.study(st.spec_of(spec, str(folder)))
    assert {row["method"] for row in shown["study"]["headline"]} == {"tmr"}
    assert set(shown["study"]) == {"headline", "pooled_test", "tmr_languages"}
    assert to_json(shown["datasets"]) == to_json(result["datasets"])  # each dataset's report is the whole report
    pooled = [t for row in shown["study"]["headline"] for t in row["tests"]]
    assert all(t["m"] == sum(p["p_value"] == p["p_value"] for p in pooled) for t in pooled)  # the family shown
    assert "S^ρ" not in st.markdown(shown) and "TMR recalls per language" in st.render(shown)
    spec["options"]["methods"] = ["tmr", "bleu"]
    with pytest.raises(ValueError, match="methods must list some of hardeval, tmr, bucket_f1, nrb, rockner"):
        st.spec_of(spec, str(folder))


def test_the_decoding_and_beta_options_reach_each_dataset_report(folder):
    """A study's scheme, mode and beta are each dataset's report's (the report run on its own
    with them, key for key)."""
    spec = make_study(folder)
    spec["options"].update(scheme="IOB2", mode="strict", beta=2.0, resamples=50)
    spec["datasets"] = spec["datasets"][:1]
    spec["systems"] = {system: {d: runs for d, runs in by.items() if d == spec["datasets"][0]["name"]}
                       for system, by in spec["systems"].items()}
    shown = st.study(st.spec_of(spec, str(folder)))
    name = spec["datasets"][0]["name"]
    report = shown["datasets"][name]
    assert report["decoding"] == {"scheme": "IOB2", "mode": "strict", "repair": "conlleval"} and report["beta"] == 2
    alone = _report(folder, name, spec["systems"], 50, scheme="IOB2", mode="strict", beta=2.0)
    assert to_json(report["systems"]) == to_json(alone["systems"])
