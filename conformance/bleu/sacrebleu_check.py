#!/usr/bin/python3
"""trepro bleu against sacreBLEU itself (the `sacrebleu` PyPI package, not in Debian: scripts/setup
installs it for /usr/bin/python3).

Builds hypothesis/reference files from the Multi30K test references (data/multi30k/, which ships
with the repository: their absence is a failure) and from hand-written lines that exercise the
13a tokenizer, degrades the hypotheses with a seeded random generator (dropped, swapped, replaced
and re-cased words, extra punctuation), and checks that `trepro bleu --json` gives sacreBLEU's
score (to 1e-9), signature and verbose score, with one and two reference files, case-sensitive and
lower-cased.

Usage: /usr/bin/python3 sacrebleu_check.py TREPRO
Exit 77 (ctest: skipped; a failure in CI) when sacrebleu is missing.
"""
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile

try:
    import sacrebleu
    from sacrebleu.metrics import BLEU
except ImportError:
    print("sacrebleu_check: skipped: the sacrebleu Python package is not importable by "
          f"{sys.executable} (scripts/setup installs sacrebleu 2.4.3 for /usr/bin/python3)")
    sys.exit(77)

HAND_WRITTEN = [
    "Hello, world! It costs $3.50, or 3,000 yen.",
    "e.g. the U.S.A. in 2010-2011 was -great-",
    "a&amp;b &quot;q&quot; &lt;tag&gt; (really?) [x] {y} ~z~",
    "Ein Mann in blauem Hemd.Er läuft,schnell über die Straße.",
    "Zwei Männer\u00a0stehen  am Strand ,  und lachen .",
    "ÄRGER IM BÜRO: Öl auf dem Boden!",
    "",
    "tab\tseparated\twords and trailing spaces   ",
]


def find_multi30k():
    """The repository's data/ folder, which holds multi30k/ (the data ships with the project); its
    absence is a failure."""
    data = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data"))
    for language in ("de", "en"):
        path = os.path.join(data, "multi30k", f"test_2016_flickr.{language}.gz")
        if not os.path.exists(path):
            print(f"sacrebleu_check: FAIL: {path} is missing: the Multi30K data ships with the repository "
                  "(data/multi30k/README.md)")
            sys.exit(1)
    return data


def read_lines(path):
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
        return [line.rstrip("\n") for line in f]


def real_outputs(data):
    """Translations by trained models committed under reports/ (`trepro evaluate` writes them as
    <split>.<checkpoint>.hyp.<language>), against their Multi30K references: {name: (refs, hyps)}."""
    reports = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reports")
    found = {}
    for root, _, names in sorted(os.walk(reports)):
        for name in sorted(names):
            parts = name.split(".")
            if len(parts) == 4 and parts[2] == "hyp":
                split, lang = parts[0], parts[3]
                ref_path = os.path.join(data, "multi30k", f"{split}.{lang}.gz")
                with open(os.path.join(root, name), encoding="utf-8", newline="\n") as f:
                    hyps = [line.rstrip("\n") for line in f]
                if os.path.exists(ref_path):
                    found[f"real:{os.path.relpath(os.path.join(root, name), reports)}"] = (read_lines(ref_path), hyps)
    return found


def degrade(line, rng, strength):
    words = line.split(" ")
    out = []
    for w in words:
        r = rng.random()
        if r < strength * 0.3:
            continue
        if r < strength * 0.5:
            w = w.upper() if rng.random() < 0.5 else w.lower()
        elif r < strength * 0.7:
            w = rng.choice(["the", "a", "man", "Mann", "ein", "dog", ",", ".", "3.5", "x-ray"])
        out.append(w)
    if len(out) > 2 and rng.random() < strength:
        i = rng.randrange(len(out) - 1)
        out[i], out[i + 1] = out[i + 1], out[i]
    if rng.random() < strength * 0.3:
        out.append(rng.choice(["!", "?", "...", "&quot;ok&quot;"]))
    return " ".join(out)


def write(dirname, name, lines):
    path = os.path.join(dirname, name)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(line + "\n" for line in lines))
    return path


def main():
    trepro = sys.argv[1]
    rng = random.Random(2024)
    corpora = {"hand": HAND_WRITTEN}
    data = find_multi30k()
    for lang in ["en", "de"]:
        corpora[f"multi30k.{lang}"] = read_lines(os.path.join(data, "multi30k", f"test_2016_flickr.{lang}.gz"))
    real = real_outputs(data)
    # (what, hypotheses, reference sets): degraded references at three strengths, and the real
    # outputs as they are; each with one reference set and with a second, degraded one.
    cases = []
    for name, refs in corpora.items():
        second = [degrade(line, rng, 0.25) for line in refs]
        for strength in [0.1, 0.4, 0.8]:
            hyps = [degrade(line, rng, strength) for line in refs]
            cases += [(f"{name} strength {strength}", hyps, [refs]), (f"{name} strength {strength}", hyps, [refs, second])]
    for name, (refs, hyps) in real.items():
        second = [degrade(line, rng, 0.25) for line in refs]
        cases += [(name, hyps, [refs]), (name, hyps, [refs, second])]
    failures = 0
    checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        for index, (name, hyps, ref_sets) in enumerate(cases):
            hyp_path = write(tmp, f"{index}.hyp", hyps)
            ref_paths = [write(tmp, f"{index}.ref{k}", refs) for k, refs in enumerate(ref_sets)]
            for lowercase in [False, True]:
                bleu = BLEU(lowercase=lowercase)
                expected = bleu.corpus_score(hyps, ref_sets)
                cmd = [trepro, "bleu", hyp_path, *ref_paths, "--json"] + (["--lowercase"] if lowercase else [])
                got = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
                checks += 1
                what = f"{name} refs {len(ref_paths)} lowercase {lowercase}"
                problems = []
                if abs(got["score"] - expected.score) > 1e-9:
                    problems.append(f"score {got['score']!r} != sacreBLEU {expected.score!r}")
                # trepro names the sacreBLEU version it matches; another installed version still
                # has to agree on everything else.
                signature = str(bleu.get_signature()).replace(f"version:{sacrebleu.__version__}", "version:2.4.3")
                if got["signature"] != signature:
                    problems.append(f"signature {got['signature']!r} != {signature!r}")
                verbose = expected.format(width=2).split(" ", 3)[3]
                if got["verbose_score"] != verbose:
                    problems.append(f"verbose {got['verbose_score']!r} != {verbose!r}")
                if problems:
                    failures += 1
                    print(f"FAIL {what}: " + "; ".join(problems))
                else:
                    print(f"ok   {what}: BLEU {got['score']:.6f}")
    print(f"sacrebleu_check: {checks - failures}/{checks} agree with sacreBLEU {sacrebleu.__version__} "
          f"({len(real)} real system output file(s))")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
