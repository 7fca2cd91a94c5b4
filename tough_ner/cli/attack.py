"""The attack command: writes a RockNER-style adversarial version of a test set."""
from __future__ import annotations

import os
import sys
from collections import Counter

from ..core.batch import Batch
from ..core.stats import TrainStats
from ..present.formatting import format_value
from ._common import _read, refuse_overwriting, seed


def _dictionary(sources, types):
    from ..attacks import dictionaries

    scheme = dictionaries.scheme_for(types)
    person, place = ("PER", "LOC") if scheme == "conll" else ("PERSON", "GPE")
    parts = []
    for source in sources or ["builtin"]:
        if source == "builtin" or source.startswith("builtin:"):
            parts.append(dictionaries.builtin(source.partition(":")[2] or scheme))
        elif source == "faker":
            parts.append(dictionaries.faker_people(person))
        elif source == "geonames":
            parts.append(dictionaries.geonames_places(place, place))
        else:
            parts.append(dictionaries.load(source))
    return dictionaries.merge(*parts)


def _pos(source, path):
    if source is None:
        return None
    if source == "column":  # the test file's second column (CoNLL-2003 has POS there)
        from ..core.corpus import read_columns
        return read_columns(path, [1])[0]
    from ..attacks.taggers import spacy_pos
    return spacy_pos(source.partition(":")[2] if source.startswith("spacy:") else source)


def _victim(spec):
    """``spacy:NAME`` (a spaCy pipeline) or ``module:function`` (sentences -> tag lists)."""
    if spec is None:
        return None
    if spec.startswith("spacy:"):
        from ..attacks.taggers import spacy_tagger
        return spacy_tagger(spec.partition(":")[2])
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"--victim {spec!r}: give spacy:NAME or module:function")
    import importlib
    sys.path.insert(0, os.getcwd())  # a module beside the user's files
    try:
        function = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"--victim {spec!r}: {error}") from None
    finally:
        sys.path.pop(0)
    if not callable(function):
        raise ValueError(f"--victim {spec!r} is not callable")
    return function


def _audit_paths(args):
    """The blind audit's two files: as given, else beside --out (OUT.audit.txt, OUT.audit-key.txt)."""
    root = os.path.splitext(args.out)[0]
    return args.audit_blind or f"{root}.audit.txt", args.audit_key or f"{root}.audit-key.txt"


def cmd_attack(args) -> None:
    from ..attacks import KEPT_REASONS, attack, summary, write_attacked, write_audit
    from ..core.corpus import read_columns
    from ..attacks.fine_classes import ROUTES

    if args.level in ("context", "both") and (args.mlm is None or args.pos is None):
        raise ValueError(f"--level {args.level} needs --mlm (a local masked-LM directory) and --pos")
    if args.audit and args.level not in ("entity", "both", "cross_type"):
        raise ValueError(f"--audit reads replaced entities: --level {args.level} replaces none (give entity, both "
                         f"or cross_type)")
    if args.audit < 0:
        raise ValueError(f"--audit {args.audit}: give the number of replacements to sample, 1 or more")
    ratios = [float(r) for r in args.ratios.split(",")] if args.ratios else [args.ratio]
    root, suffix = os.path.splitext(args.out)
    outputs = [f"{root}-{value:g}{suffix}" if args.ratios else args.out for value in ratios]
    repeated = sorted({out for out in outputs if outputs.count(out) > 1})
    if repeated:  # 0.5,0.50 would write one file twice
        raise ValueError(f"--ratios {args.ratios} names the same ratio twice: {', '.join(repeated)} would be "
                         f"written more than once")
    audit_paths = list(zip(("--audit-blind", "--audit-key"), _audit_paths(args))) if args.audit else []
    refuse_overwriting([("--out", out) for out in outputs] + audit_paths,
                       [("--test", args.test), ("--train", args.train)]
                       + [("--dictionary", d) for d in args.dictionary or () if os.path.isfile(d)])
    test = _read(args.test)
    dictionary = None
    if args.level in ("entity", "both", "cross_type") and args.dictionary:
        dictionary = _dictionary(args.dictionary, Batch(test.tokens, test.tags).types)
    fill_mask = pos = None
    if args.level in ("context", "both"):
        from ..attacks.taggers import mlm_fill_mask
        fill_mask = mlm_fill_mask(args.mlm, top_k=args.ranks[1])
        pos = _pos(args.pos, args.test)
    victim = _victim(args.victim)
    # The file's middle columns (POS, chunk) and documents are kept in the output.
    middle = read_columns(args.test)[1:-1]
    columns = {f"column{k + 1}": values for k, values in enumerate(middle)}
    documents = test.documents  # None without -DOCSTART-: each sentence its own document
    stats = TrainStats.coerce(args.train, keep_text=True) if args.train else None  # once for every ratio
    for value, out in zip(ratios, outputs):
        attacked = attack(test, level=args.level, ratio=value, seed=args.seed, dictionary=dictionary, train=stats,
                          fill_mask=fill_mask, pos=pos, ranks=tuple(args.ranks), victim=victim, columns=columns,
                          documents=documents, mode=args.case, year=args.year).to_dict()
        write_attacked(out, attacked, list(columns))
        levels = Counter(r["level"] for records in attacked["replacements"] for r in records)
        print(f"{out}: {len(attacked['tokens'])} sentences; replaced: "
              + ", ".join(f"{n} {level}" for level, n in sorted(levels.items())) if levels else
              f"{out}: {len(attacked['tokens'])} sentences; nothing replaced")
        if levels["entity"] or levels["cross_type"]:
            facts = summary(attacked)
            print(f"  {facts['n_replaced']} of {facts['n_mentions']} mentions replaced "
                  f"({format_value(facts['attacked_share'])}); fine class by "
                  + ", ".join(f"{route} {format_value(facts['route_' + route])}" for route in ROUTES))
            kept = [(facts[key], key[len(f"n_kept_{reason}_"):], reason) for reason in KEPT_REASONS
                    for key in facts if key.startswith(f"n_kept_{reason}_") and facts[key]]
            if kept:
                print("  kept as they are: " + ", ".join(f"{n} {entity_type} {reason.replace('_', ' ')}"
                                                         for n, entity_type, reason in kept))
    if args.audit:  # the last ratio's set; blind: the sentences only, the answers in the key
        blind, key = _audit_paths(args)
        n = write_audit(attacked, args.audit, blind, key, seed=args.seed)
        print(f"blind audit of {n} replacements (seed {args.seed}): {blind}; its key: {key}")


def _attack_arguments(p) -> None:
    p.add_argument("--test", required=True, help="CoNLL file to attack (token first, gold tag last)")
    p.add_argument("--train", help="training CoNLL file or stats: its mentions are never used as replacements")
    p.add_argument("--level", default="entity", choices=["entity", "context", "both", "typo", "case", "cross_type"],
                   help="entity (RockNER, default), context (RockNER), both, typo (character typos inside "
                        "entities), case (sentences lower- or upper-cased, see --case), cross_type (entities "
                        "replaced by entities of another type)")
    p.add_argument("--case", default="lower", choices=["lower", "upper"], help="the case attack's mode")
    p.add_argument("--ratio", type=float, default=1.0,
                   help="share of eligible originals attacked (entities; sentences for --level case)")
    p.add_argument("--ratios", help="comma-separated ratios, one output file per ratio: OUT-RATIO.EXT")
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--year", type=int,
                   help="the year the test set was written (CoNLL-2003: 1996): names that came into use later "
                        "(Czechia, the Europa League) are never drawn")
    p.add_argument("--dictionary", action="append",
                   help="builtin[:conll|:ontonotes] (default), faker, geonames, a JSON file or RockNER .jsonl "
                        "file/folder; repeatable (pooled)")
    p.add_argument("--mlm", help="local masked-LM directory (transformers) for the context level")
    p.add_argument("--pos", help="POS tags for the context level: 'column' (the test file's 2nd column) "
                                 "or a spaCy pipeline (spacy:NAME)")
    p.add_argument("--ranks", type=int, nargs=2, default=[51, 100], metavar=("FIRST", "LAST"),
                   help="rank window of the masked-LM proposals (default 51 100)")
    p.add_argument("--victim", help="context level: the tagger whose misses choose the candidate sentence, "
                                    "spacy:NAME or module:function (sentences -> IOB2 tag lists)")
    p.add_argument("--audit", type=int, default=0, metavar="N",
                   help="write a blind audit of N replaced entities drawn with --seed (the last ratio's set): "
                        "the original and attacked sentence only, for a reader to judge, and a separate key "
                        "(type, fine class, facet, route)")
    p.add_argument("--audit-blind", metavar="PATH", help="the blind audit's file (default: OUT.audit.txt)")
    p.add_argument("--audit-key", metavar="PATH", help="the audit's key (default: OUT.audit-key.txt)")
    p.add_argument("--out", required=True, help="output CoNLL file: the input's columns, -DOCSTART- lines kept")
    p.set_defaults(run=cmd_attack)


# The arguments of each command of this group (cli.COMMANDS names the group).
ARGUMENTS = {"attack": _attack_arguments}
