#!/usr/bin/python3
"""`trepro bleu --paper-wmt14` against independent peers: sacremoses (the Python port of the Moses
tokenizer, which follows tokenizer.perl as of 2017, as ours does) for replace-unicode-punctuation
and tokenization, Python's re for the ##AT## compound split, and sacreBLEU with tokenize='none'
and smooth_method='none' for multi-bleu.perl's formula (on Moses tokens, where no Unicode
whitespace is left, the two count the same tokens).

Files: the Multi30K test references (data/multi30k/, which ships with the repository: their
absence is a failure) with the committed translations under reports/ (English),
and German references against seeded degradations of themselves (words dropped, swapped,
hyphenated, abbreviations and punctuation added), plus hand-written lines for the tokenizer's
rules. Checks the score (to 1e-9) and the hypothesis and reference lengths.

Usage: /usr/bin/python3 paper_bleu_check.py TREPRO
Exit 77 (ctest: skipped; a failure in CI) when sacremoses or sacrebleu is missing.
"""
import gzip
import json
import os
import random
import re
import subprocess
import sys
import tempfile

try:
    import sacrebleu
    from sacremoses import MosesPunctNormalizer, MosesTokenizer
except ImportError as error:
    print(f"paper_bleu_check: skipped: {error} for {sys.executable} "
          "(scripts/setup installs sacremoses 0.2.0 and sacrebleu 2.4.3 for /usr/bin/python3)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
HAND_WRITTEN = [
    "Der Dr. Müller kam z.B. um 3 Uhr. Er sagte: \"Das ist gut\", und ging...",
    "Peter's Haus-Boot kostet 1,5 Mio. Euro, d.h. 3,000 mehr.",
    "„Hallo“ sagte er… ’s ist ein Nord-Süd-Gefälle & [mehr] | <weniger>",
    "It's the 1990's, isn't it? 'Yes.' No. 5 and No. One, e.g. rock-and-roll",
    "Warte.... ja a..b -- x - y -z",
    "Zwei Männer\u00a0stehen  am Strand ,  und lachen .",
    "",
]


def find_multi30k():
    """The repository's data/multi30k/ (the data ships with the project); its absence is a failure."""
    folder = os.path.normpath(os.path.join(HERE, "..", "..", "data", "multi30k"))
    for language in ("de", "en"):
        path = os.path.join(folder, f"test_2016_flickr.{language}.gz")
        if not os.path.exists(path):
            print(f"paper_bleu_check: FAIL: {path} is missing: the Multi30K data ships with the repository "
                  "(data/multi30k/README.md)")
            sys.exit(1)
    return folder


def read_gz(path):
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
        return [line.rstrip("\n") for line in f]


def degrade(line, rng):
    out = []
    for word in line.split(" "):
        r = rng.random()
        if r < 0.08:
            continue
        if r < 0.14 and out:
            out[-1], word = word, out[-1]
        elif r < 0.20:
            word = word + "-" + rng.choice(["Haus", "Boot", "x", "1"])
        elif r < 0.24:
            word = rng.choice(["z.B.", "Dr.", "usw.", "ca.", "Nr.", "etc."])
        elif r < 0.28:
            word = word + rng.choice([",", ".", "...", "'s", "!", ":"])
        out.append(word)
    return " ".join(out)


def peer_bleu(hypotheses, references, language):
    normalizer, tokenizer = MosesPunctNormalizer(lang=language), MosesTokenizer(lang=language)

    def tokens(line):
        tokenized = tokenizer.tokenize(normalizer.replace_unicode_punct(line), return_str=True, escape=True)
        return re.sub(r"(\S)-(\S)", r"\1 ##AT##-##AT## \2", tokenized)

    return sacrebleu.corpus_bleu([tokens(h) for h in hypotheses], [[tokens(r) for r in references]],
                                 tokenize="none", smooth_method="none", force=True)


def main():
    trepro = sys.argv[1]
    data = find_multi30k()
    cases = {}
    rng = random.Random(18)
    german = read_gz(os.path.join(data, "test_2016_flickr.de.gz"))
    for name, refs in {"hand": HAND_WRITTEN, "multi30k_de": german}.items():
        cases[f"{name}:de:degraded"] = ("de", refs, [degrade(line, rng) for line in refs])
        cases[f"{name}:de:same"] = ("de", refs, refs)
    cases["hand:en:degraded"] = ("en", HAND_WRITTEN, [degrade(line, rng) for line in HAND_WRITTEN])
    english = read_gz(os.path.join(data, "test_2016_flickr.en.gz"))
    for root, _, names in sorted(os.walk(os.path.join(HERE, "..", "..", "reports", "runs"))):
        for name in sorted(n for n in names if n.startswith("test_2016_flickr.") and n.endswith(".hyp.en")):
            with open(os.path.join(root, name), encoding="utf-8", newline="\n") as f:
                cases[f"real:{os.path.basename(root)}/{name}"] = ("en", english, [l.rstrip("\n") for l in f])
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (language, refs, hyps) in cases.items():
            paths = []
            for kind, lines in (("hyp", hyps), ("ref", refs)):
                paths.append(os.path.join(tmp, kind))
                with open(paths[-1], "w", encoding="utf-8", newline="\n") as f:
                    f.write("".join(line + "\n" for line in lines))
            result = subprocess.run([trepro, "bleu", *paths, "--paper-wmt14", "--language", language, "--json"],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                print(f"FAIL {name}: trepro bleu exited {result.returncode}: {result.stderr.strip()}")
                failures += 1
                continue
            ours, peer = json.loads(result.stdout), peer_bleu(hyps, refs, language)
            same = (abs(ours["score"] - peer.score) < 1e-9 and ours["hyp_len"] == peer.sys_len
                    and ours["ref_len"] == peer.ref_len)
            print(f"{'ok  ' if same else 'FAIL'} {name} ({len(hyps)} lines): trepro {ours['score']:.6f} "
                  f"({ours['hyp_len']}/{ours['ref_len']} tokens), peer {peer.score:.6f} ({peer.sys_len}/{peer.ref_len})")
            failures += not same
    if failures:
        print(f"paper_bleu_check: {failures} of {len(cases)} case(s) differ")
        return 1
    print(f"paper_bleu_check: {len(cases)} cases equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
