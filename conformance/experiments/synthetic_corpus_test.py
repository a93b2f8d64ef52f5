#!/usr/bin/python3
"""experiments/synthetic_corpus.py on a made-up Multi30K of a few sentences: the corpus has its six
files with the pairs asked for, the same for a seed; a run killed while it writes leaves no
--out folder (reports/corpus/measure.sh takes an existing one for complete), only
<out>.partial, which the next run replaces; an existing --out is refused and left as it is.
"""
import gzip
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "experiments", "synthetic_corpus.py")
FILES = sorted(f"{split}.{lang}" for split in ("train", "newstest2013", "newstest2014") for lang in ("de", "en"))
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def multi30k(folder):
    os.makedirs(folder)
    for lang, lines in (("de", ["ein Hund läuft", "zwei Frauen sitzen auf einer Bank"]),
                        ("en", ["a dog runs", "two women sit on a bench"])):
        with gzip.open(os.path.join(folder, f"train.{lang}.gz"), "wt", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


def command(out, source, pairs, seed=1):
    return [sys.executable, SCRIPT, "--out", out, "--multi30k", source, "--pairs", str(pairs), "--seed", str(seed)]


def line_counts(out):
    counts = {}
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name), "rb") as f:
            counts[name] = sum(1 for _ in f)
    return counts


def contents(out):
    result = {}
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name), "rb") as f:
            result[name] = f.read()
    return result


def killed_while_writing(tmp, source):
    """SIGKILL once the training split has its first bytes on disk: nothing at --out."""
    out = os.path.join(tmp, "killed")
    # Far more pairs than are written before the kill, so that it lands in the middle.
    process = subprocess.Popen(command(out, source, 100_000_000), stderr=subprocess.PIPE)
    written = [os.path.join(out + ".partial", "train.en"), os.path.join(out, "train.en")]
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline \
            and not any(os.path.exists(p) and os.path.getsize(p) > 0 for p in written):
        time.sleep(0.05)
    started = process.poll() is None
    process.send_signal(signal.SIGKILL)
    stderr = process.communicate()[1].decode(errors="replace")
    check(started, f"the run is still writing when killed (stderr: {stderr.strip()[-300:]})")
    check(not os.path.exists(out), f"a run killed while writing leaves no {out}")
    check(os.path.isdir(out + ".partial"), "it leaves its files in <out>.partial")
    return out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "multi30k")
        multi30k(source)

        out = killed_while_writing(tmp, source)
        # A file of the killed run's that no corpus has: the next run must start from an empty folder.
        os.makedirs(out + ".partial", exist_ok=True)
        with open(os.path.join(out + ".partial", "stale"), "w") as f:
            f.write("from the killed run\n")
        result = subprocess.run(command(out, source, 50), capture_output=True, text=True)
        check(result.returncode == 0, f"a run after the killed one succeeds ({result.stderr.strip()[-300:]})")
        check(os.path.isdir(out) and sorted(os.listdir(out)) == FILES,
              f"it writes exactly {', '.join(FILES)} ({sorted(os.listdir(out)) if os.path.isdir(out) else 'none'})")
        check(not os.path.exists(out + ".partial"), "and leaves no <out>.partial")
        expected = {f"train.{lang}": 50 for lang in ("de", "en")}
        expected.update({f"newstest2013.{lang}": 3000 for lang in ("de", "en")})
        expected.update({f"newstest2014.{lang}": 3003 for lang in ("de", "en")})
        counts = line_counts(out) if os.path.isdir(out) else {}
        check(counts == expected, f"50 training pairs, 3000 and 3003 test pairs ({counts})")

        # With a trailing slash the partial folder is still the sibling <out>.partial.
        again = os.path.join(tmp, "again")
        result = subprocess.run(command(again + "/", source, 50), capture_output=True, text=True)
        check(result.returncode == 0 and os.path.isdir(again) and contents(again) == contents(out),
              f"the same seed writes the same corpus, --out given with a trailing slash ({result.stderr.strip()})")

        before = contents(out)
        result = subprocess.run(command(out, source, 20, seed=2), capture_output=True, text=True)
        check(result.returncode != 0 and f"--out {out} already exists" in result.stderr,
              f"an existing --out is refused, naming it ({result.stderr.strip()})")
        check(contents(out) == before and not os.path.exists(out + ".partial"), "and is left as it was")
    print(f"synthetic_corpus_test: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
