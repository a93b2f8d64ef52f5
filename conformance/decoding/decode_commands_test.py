#!/usr/bin/python3
"""The decoding commands end to end on a tiny run: `trepro train` on a small synthetic
German-English corpus laid out as Multi30K (so the test needs no data), then

  translate  (file and stdin, greedy) -> one detokenized line per input line;
  evaluate   (greedy) -> RUN/report.json "test" fields valid against reports/schema.json, its
             hypotheses file equal to translate's output (batching changes nothing), its BLEU
             equal to `trepro bleu` on that file (with --paper-wmt14 also the paper's measure,
             equal to `trepro bleu --paper-wmt14`), and `--average 2` naming the averaged
             weights and dropping the paper's measure it did not compute; each search other than
             the paper's named in the hypotheses file, so that no decoding overwrites another's;
  attention  -> layers x heads probability matrices whose shapes match the tokens, and that
             reports/render.py draws;
  errors     -> a missing run or vocabulary is a message naming the file, not a crash.

Usage: decode_commands_test.py TREPRO
"""
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORTS = os.path.join(HERE, "..", "..", "reports")
failures = []

LEXICON = {"ein": "a", "hund": "dog", "katze": "cat", "mann": "man", "frau": "woman", "kind": "child",
           "läuft": "runs", "springt": "jumps", "sitzt": "sits", "schnell": "quickly", "auf": "on",
           "dem": "the", "gras": "grass", "straße": "street", "rot": "red", "blau": "blue", "groß": "big"}


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def run(args, stdin=None):
    return subprocess.run(args, input=stdin, capture_output=True, text=True)


def write_corpus(data_dir):
    """train/val/test_2016_flickr.{de,en}.gz: random phrases and their word-by-word translation."""
    rng = random.Random(5)
    words = sorted(LEXICON)
    os.makedirs(os.path.join(data_dir, "multi30k"))
    sizes = {"train": 400, "val": 30, "test_2016_flickr": 25}
    for split, n in sizes.items():
        de, en = [], []
        for _ in range(n):
            phrase = [rng.choice(words) for _ in range(rng.randint(3, 7))]
            de.append(" ".join(phrase).capitalize() + ".")
            en.append(" ".join(LEXICON[w] for w in phrase).capitalize() + ".")
        for lang, lines in (("de", de), ("en", en)):
            with gzip.open(os.path.join(data_dir, "multi30k", f"{split}.{lang}.gz"), "wt", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))
    return sizes["test_2016_flickr"]


def tiny_config(path, data_dir):
    config = {
        "model": {"architecture": "encoder_decoder", "vocab_size": 60, "d_model": 32, "heads": 4,
                  "encoder_layers": 1, "decoder_layers": 1, "d_ff": 64, "max_len": 64, "dropout": 0.0},
        "train": {"label_smoothing": 0.1, "optimizer": {"lr": 0.003}, "schedule": {"kind": "inverse_sqrt", "warmup": 10},
                  "seed": 3, "max_tokens": 300, "max_steps": 40, "validate_every": 20, "checkpoint_every": 20},
        "data": {"dataset": "multi30k", "source_language": "de", "target_language": "en",
                 "vocabulary": {"kind": "bpe", "size": 60}, "epochs": 0, "dir": data_dir},
    }
    with open(path, "w") as f:
        json.dump(config, f)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def main():
    trepro = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = os.path.join(tmp, "data")
        n_test = write_corpus(data_dir)
        tiny_config(os.path.join(tmp, "tiny.json"), data_dir)
        run_dir = os.path.join(tmp, "run")
        trained = run([trepro, "train", os.path.join(tmp, "tiny.json"), "--out", run_dir])
        check(trained.returncode == 0, f"tiny run trains ({trained.stderr.strip()[-300:]})")
        if trained.returncode != 0:
            return 1
        test_de = os.path.join(data_dir, "multi30k", "test_2016_flickr.de.gz")
        test_en = os.path.join(data_dir, "multi30k", "test_2016_flickr.en.gz")

        out = os.path.join(tmp, "translated.txt")
        result = run([trepro, "translate", run_dir, "--greedy", "--input", test_de, "--output", out])
        check(result.returncode == 0, f"translate a file ({result.stderr.strip()[-300:]})")
        translated = read_lines(out) if result.returncode == 0 else []
        check(len(translated) == n_test, f"one output line per input line ({len(translated)} of {n_test})")
        check(all("▁" not in line for line in translated), "output is detokenized (no sentencepiece markers)")
        result = run([trepro, "translate", run_dir, "--greedy"], stdin="Ein hund läuft.\n\nEine katze.\n")
        check(result.returncode == 0 and len(result.stdout.split("\n")) == 4 and result.stdout.split("\n")[1] == "",
              f"translate stdin, an empty line stays empty ({result.stdout!r})")

        result = run([trepro, "evaluate", run_dir, "--greedy", "--paper-wmt14"])
        check(result.returncode == 0, f"evaluate greedy ({result.stderr.strip()[-300:]})")
        with open(os.path.join(run_dir, "report.json")) as f:
            test = json.load(f).get("test", {})
        for key in ("split", "checkpoint", "checkpoint_step", "loss", "perplexity", "bleu", "bleu_signature",
                    "bleu_tok_lc", "hypotheses_file", "decoding"):
            check(key in test, f"report test.{key} written")
        check(test.get("checkpoint") == "checkpoints/best.safetensors", f"checkpoint relative to the run: {test.get('checkpoint')}")
        check(test.get("hypotheses_file") == "test_2016_flickr.best.greedy.hyp.en",
              f"a greedy decoding's hypotheses file names the search ({test.get('hypotheses_file')})")
        hyp_path = os.path.join(run_dir, test.get("hypotheses_file", "missing"))
        check(os.path.exists(hyp_path) and read_lines(hyp_path) == translated,
              "evaluate's hypotheses equal translate's (greedy, different batching)")
        bleu = json.loads(run([trepro, "bleu", hyp_path, test_en, "--json"]).stdout)
        check(abs(bleu["score"] - test.get("bleu", -1)) < 1e-12 and bleu["signature"] == test.get("bleu_signature"),
              f"test.bleu is `trepro bleu` of the hypotheses ({bleu['score']} vs {test.get('bleu')})")
        tok = json.loads(run([trepro, "bleu", hyp_path, test_en, "--tokenized-lowercase", "--json"]).stdout)
        check(abs(tok["score"] - test.get("bleu_tok_lc", -1)) < 1e-12, "test.bleu_tok_lc is `trepro bleu --tokenized-lowercase`")
        paper = json.loads(run([trepro, "bleu", hyp_path, test_en, "--paper-wmt14", "--language", "en", "--json"]).stdout)
        check(abs(paper["score"] - test.get("bleu_paper_wmt14", -1)) < 1e-12
              and paper["signature"] == test.get("bleu_paper_wmt14_signature")
              and paper["signature"].startswith("paper-wmt14|nrefs:1|case:mixed|tok:moses-en+atat|"),
              f"test.bleu_paper_wmt14 is `trepro bleu --paper-wmt14 --language en` ({paper} vs {test})")
        check(test.get("decoding", {}).get("bleu_paper_wmt14_verbose", "").startswith("BLEU = "),
              f"the paper's multi-bleu line is kept in test.decoding ({test.get('decoding')})")
        validate = run([sys.executable, os.path.join(REPORTS, "validate_report.py"), os.path.join(run_dir, "report.json")])
        check(validate.returncode == 0,
              f"report.json valid against reports/schema.json after evaluate ({validate.stderr.strip()})")

        result = run([trepro, "evaluate", run_dir, "--average", "2"])
        with open(os.path.join(run_dir, "report.json")) as f:
            test = json.load(f).get("test", {})
        check(result.returncode == 0 and test.get("checkpoint", "").startswith("checkpoints/average_last_2")
              and test.get("decoding", {}).get("beam") == 4
              and test["decoding"].get("length_penalty_alpha") == 0.6 and test["decoding"].get("max_extra") == 50
              and test["decoding"].get("beam_stop") == "k_finished",
              f"evaluate --average 2 with the paper's decoding by default: beam 4, alpha 0.6, output length "
              f"source + 50, fairseq's stop ({test.get('checkpoint')}; {test.get('decoding')}; "
              f"{result.stderr.strip()[-200:]})")
        averaged = os.path.splitext(os.path.basename(test.get("checkpoint", "")))[0]
        check(test.get("hypotheses_file") == f"test_2016_flickr.{averaged}.hyp.en",
              f"the paper's decoding's hypotheses file names the checkpoint only ({test.get('hypotheses_file')})")
        result = run([trepro, "evaluate", run_dir, "--beam-stop", "bound"])
        with open(os.path.join(run_dir, "report.json")) as f:
            test = json.load(f).get("test", {})
        decoding = test.get("decoding", {})
        check(result.returncode == 0 and decoding.get("beam_stop") == "bound"
              and "stop at the bound" in decoding.get("search", ""),
              f"evaluate --beam-stop bound records the rule ({decoding}; {result.stderr.strip()[-200:]})")
        check(test.get("hypotheses_file") == "test_2016_flickr.best.bound.hyp.en"
              and read_lines(hyp_path) == translated,
              f"a beam decoding of the best checkpoint leaves the greedy one's file as it was "
              f"({test.get('hypotheses_file')})")
        result = run([trepro, "translate", run_dir, "--beam-stop", "early"], stdin="x\n")
        check(result.returncode != 0 and "--beam-stop" in result.stderr and "early" in result.stderr,
              f"an unknown --beam-stop is an error naming the option and the value ({result.stderr.strip()})")
        check("bleu_paper_wmt14" not in test and "bleu_paper_wmt14_signature" not in test,
              "evaluate without --paper-wmt14 leaves no paper's BLEU of another checkpoint")

        attention_path = os.path.join(tmp, "attention.json")
        result = run([trepro, "attention", run_dir, "--source", "Ein mann sitzt auf dem gras.", "--out", attention_path])
        check(result.returncode == 0, f"attention ({result.stderr.strip()[-300:]})")
        if result.returncode == 0:
            with open(attention_path) as f:
                att = json.load(f)
            s, t = len(att["source_tokens"]), len(att["target_tokens"])
            check(att["source_tokens"][-1] == "</s>" and att["target_tokens"][0] == "<s>", "tokens end/start marked")
            shapes = {block: (len(layers), len(layers[0]), len(layers[0][0]), len(layers[0][0][0]))
                      for block, layers in att["attention"].items()}
            check(shapes == {"encoder_self": (1, 4, s, s), "decoder_self": (1, 4, t, t), "decoder_cross": (1, 4, t, s)},
                  f"attention shapes [layers, heads, queries, keys] {shapes}")
            rows = [row for layers in att["attention"].values() for heads in layers for m in heads for row in m]
            check(all(abs(sum(row) - 1.0) < 1e-9 for row in rows), "every attention row sums to 1")
            rendered = run([sys.executable, os.path.join(REPORTS, "render.py"), attention_path, "--out",
                            os.path.join(tmp, "rendered")])
            check(rendered.returncode == 0,
                  f"render.py draws it ({rendered.stderr.strip()[-200:]})")

        result = run([trepro, "translate", os.path.join(tmp, "no_such_run")])
        check(result.returncode != 0 and "no_such_run" in result.stderr, f"missing run named ({result.stderr.strip()})")
        os.remove(os.path.join(run_dir, "vocab.model"))
        result = run([trepro, "translate", run_dir], stdin="x\n")
        check(result.returncode == 1 and "vocab.model" in result.stderr, f"missing vocabulary named ({result.stderr.strip()})")
    print(f"decode_commands_test: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
