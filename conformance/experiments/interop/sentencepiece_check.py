#!/usr/bin/python3
"""sentencepiece models between trepro and the Python `sentencepiece` package (PyPI; scripts/setup
installs it for /usr/bin/python3), both ways, through committed files next to this script:

  corpus.txt            the training sentences, one per line
  python_unigram.model  trained by the package (unigram, identity normalization where ours is
                        nmt_nfkc, with our special ids pad 0, bos 1, eos 2, unk 3); python_ids.json holds the package's ids and decodings of
                        SENTENCES. vocabulary_interop_test.cc loads the model with our
                        Vocabulary and must give the same.
  trepro_bpe.model      trained by our Vocabulary (vocabulary_interop_test.cc checks that it still
                        trains these bytes and encodes SENTENCES as trepro_ids.json says). This
                        script loads it with the package, which must agree.

Usage: /usr/bin/python3 sentencepiece_check.py [--write-python-files]
Exit 77 (ctest: skipped; a failure in CI) when sentencepiece is missing.
"""
import json
import os
import sys

try:
    import sentencepiece as spm
except ImportError:
    print(f"sentencepiece_check: skipped: sentencepiece is not importable by {sys.executable} "
          "(scripts/setup installs it for /usr/bin/python3)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
# Seen words, a new word, characters the corpus lacks (unk), and an empty line.
SENTENCES = ["Ein Hund spielt im Park.", "Two girls wave on the beach.", "Der Bär isst 火 und Ω.", ""]

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def path(name):
    return os.path.join(HERE, name)


def encodings(model):
    processor = spm.SentencePieceProcessor(model_file=model)
    ids = [processor.encode(s) for s in SENTENCES]
    return {"sentences": SENTENCES, "ids": ids, "decoded": [processor.decode(i) for i in ids]}


def write_python_files():
    with open(path("corpus.txt"), encoding="utf-8") as f:
        corpus = [line.rstrip("\n") for line in f]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus), model_prefix=path("python_unigram"),
                                   model_type="unigram", vocab_size=60, pad_id=0, bos_id=1, eos_id=2, unk_id=3,
                                   normalization_rule_name="identity", num_threads=1, minloglevel=2)
    os.remove(path("python_unigram.vocab"))
    with open(path("python_ids.json"), "w", encoding="utf-8") as f:
        json.dump(encodings(path("python_unigram.model")), f, ensure_ascii=False, indent=1)
        f.write("\n")


def main(argv):
    if argv == ["--write-python-files"]:
        write_python_files()
        return 0
    for model, ids_file in (("python_unigram.model", "python_ids.json"), ("trepro_bpe.model", "trepro_ids.json")):
        with open(path(ids_file), encoding="utf-8") as f:
            expected = json.load(f)
        try:
            got = encodings(path(model))
        except (OSError, RuntimeError) as e:
            check(False, f"the package loads {model}: {e}")
            continue
        check(got["ids"] == expected["ids"], f"{model}: the package's ids are those of {ids_file}")
        check(got["decoded"] == expected["decoded"], f"{model}: the package's decodings are those of {ids_file}")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
