#!/usr/bin/python3
"""A synthetic WMT14-sized parallel corpus for measuring the data pipeline (trepro prepare and
train --data) without WMT's files: sentences recombined from Multi30K's words, drawn with their
Multi30K frequencies, with sentence lengths shaped like WMT14 En-De's (log-normal, median about
22 words, a long tail). Deterministic for a seed. Writes <out>/{train,newstest2013,newstest2014}
.{de,en} (plain text, the parallel dataset's layout) into <out>.partial and renames that to <out>
when every file is written, so <out> exists complete or not at all; --out must not exist yet nor
be in the repository's data/ folder (the Multi30K it ships, checked by data/multi30k/SHA256SUMS).

  /usr/bin/python3 experiments/synthetic_corpus.py --out corpora/synthetic_wmt14   # 4.5M pairs
"""
import argparse
import collections
import gzip
import itertools
import os
import random
import shutil
import sys

SPLITS = (("newstest2013", 3000), ("newstest2014", 3003))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository


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
        # On disk before the folder is renamed into place: a crash after the rename must not
        # leave a complete-looking corpus of truncated files.
        for f in (fde, fen):
            f.flush()
            os.fsync(f.fileno())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", type=int, default=4_500_000, help="training pairs (WMT14 En-De: about 4.5M)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--multi30k", default=os.path.join(ROOT, "data", "multi30k"),
                        help="folder of train.{de,en}.gz (default: the repository's data/multi30k)")
    args = parser.parse_args()
    out = os.path.normpath(args.out)  # "corpora/x/" would otherwise give the partial folder "corpora/x/.partial"
    shipped = os.path.realpath(os.path.join(ROOT, "data"))
    if os.path.realpath(out) == shipped or os.path.realpath(out).startswith(shipped + os.sep):
        sys.exit(f"synthetic_corpus.py: --out must not be in {shipped} (the data the repository ships)")
    # Readers (reports/corpus/measure.sh) take an existing folder for a complete corpus, so one is
    # never written into or replaced: its files may be someone's, and a corpus of another seed or
    # size would pass for the one they made.
    if os.path.lexists(out):
        sys.exit(f"synthetic_corpus.py: --out {out} already exists; remove it to write a new corpus there")
    de = word_table(os.path.join(args.multi30k, "train.de.gz"))
    en = word_table(os.path.join(args.multi30k, "train.en.gz"))
    partial = out + ".partial"
    shutil.rmtree(partial, ignore_errors=True)  # what a killed run left
    os.makedirs(partial)
    rng = random.Random(args.seed)
    write_split(partial, "train", args.pairs, rng, de, en)
    for name, pairs in SPLITS:
        write_split(partial, name, pairs, rng, de, en)
    try:
        os.rename(partial, out)
    except OSError as e:  # --out made by someone else while this ran
        sys.exit(f"synthetic_corpus.py: cannot rename {partial} to {out}: {e.strerror}; the corpus is in {partial}")


if __name__ == "__main__":
    main()
