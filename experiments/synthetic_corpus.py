#!/usr/bin/python3
"""A synthetic WMT14-sized parallel corpus for measuring the data pipeline (trepro prepare and
train --data) without WMT's files: sentences recombined from Multi30K's words, drawn with their
Multi30K frequencies, with sentence lengths shaped like WMT14 En-De's (log-normal, median about
22 words, a long tail). Deterministic for a seed. Writes <out>/{train,newstest2013,newstest2014}
.{de,en} (plain text, the parallel dataset's layout); --out must not be in /work/shared.

  /usr/bin/python3 experiments/synthetic_corpus.py --out corpora/synthetic_wmt14   # 4.5M pairs
"""
import argparse
import collections
import gzip
import itertools
import os
import random
import sys

SPLITS = (("newstest2013", 3000), ("newstest2014", 3003))


def word_table(path):
    counts = collections.Counter()
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            counts.update(line.split())
    words = sorted(counts)
    return words, list(itertools.accumulate(counts[w] for w in words))


def sentence(rng, table, length):
    words, cumulative = table
    return " ".join(rng.choices(words, cum_weights=cumulative, k=length))


def write_split(out, name, pairs, rng, de, en):
    with open(os.path.join(out, name + ".de"), "w", encoding="utf-8") as fde, \
            open(os.path.join(out, name + ".en"), "w", encoding="utf-8") as fen:
        for i in range(pairs):
            source_length = min(200, max(1, round(rng.lognormvariate(3.1, 0.6))))
            target_length = min(200, max(1, round(source_length * rng.gauss(1.05, 0.15))))
            fde.write(sentence(rng, de, source_length) + "\n")
            fen.write(sentence(rng, en, target_length) + "\n")
            if i % 500000 == 499999:
                print(f"{name}: {i + 1} pairs", file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", type=int, default=4_500_000, help="training pairs (WMT14 En-De: about 4.5M)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--multi30k", default="/work/shared/data/multi30k", help="folder of train.{de,en}.gz")
    args = parser.parse_args()
    if os.path.realpath(args.out).startswith("/work/shared"):
        sys.exit("synthetic_corpus.py: --out must not be in /work/shared (read-only, shared data)")
    de = word_table(os.path.join(args.multi30k, "train.de.gz"))
    en = word_table(os.path.join(args.multi30k, "train.en.gz"))
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    write_split(args.out, "train", args.pairs, rng, de, en)
    for name, pairs in SPLITS:
        write_split(args.out, name, pairs, rng, de, en)


if __name__ == "__main__":
    main()
