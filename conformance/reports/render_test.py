#!/usr/bin/python3
"""reports/render.py on the committed fixtures (conformance/reports/fixtures/): a run report,
an ablation over heads as `trepro ablate` lays it out (summary.json, one report per variant,
one variant not run yet) and an attention file.

Checks the fixtures follow the report schemas, the Markdown tables carry their numbers, the
paper's Table 3 rows are matched to the variants by the value of the setting they vary, every linked figure exists and is a valid SVG (or
PNG), the output is byte-identical when rendered twice, and bad inputs fail with exit 2 and a
message naming the file. Exit 77 (ctest: skipped) when matplotlib is not importable.
"""
import filecmp
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

try:
    import matplotlib  # noqa: F401
except ImportError:
    print(f"render_test: skipped: matplotlib is not importable by {sys.executable} "
          "(scripts/setup installs python3-matplotlib)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
RENDER = os.path.join(HERE, "..", "..", "reports", "render.py")
FIXTURES = os.path.join(HERE, "fixtures")
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def render(inputs, out, fmt="svg"):
    return subprocess.run([sys.executable, RENDER, *inputs, "--out", out, "--format", fmt],
                          capture_output=True, text=True)


def summary_checks(out):
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as f:
        md = f.read()
    check("| tiny_run | multi30k de-en | 3+3 | 256 | 8 | 512 | post | relu | sinusoidal | 60 | 10.68 | 11.50 | "
          "30.12 | 33.40 | 4320 |" in md, "runs table row of tiny_run")
    check("| heads1 | multi30k de-en | 3+3 | 256 | 1 |" in md, "ablation table lists the variant heads1")
    check("- heads4: heads 4" in md, "ablation names the setting each variant varies")
    check("- heads16: not run yet" in md, "a variant not run yet is listed as such")
    check("| base (heads 8) | 4.92 | 25.8 | heads8 | 11.50 | 30.12 |" in md, "Table 3 base row next to heads8")
    check("| (A) h 1 | 5.29 | 24.9 | heads1 | 14.25 | 25.50 |" in md, "Table 3 row (A) h 1 next to heads1")
    check("| (A) h 4 | 5.00 | 25.5 | heads4 | 12.75 | 28.75 |" in md, "Table 3 row (A) h 4 next to heads4")
    check("`nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.3`" in md, "sacreBLEU signature shown")
    check("## Mutation score: 1/3 killed" in md, "mutation score heading counts the killed mutants")
    check("| `model_attention_no_scale` | model | attention logits not scaled by 1/sqrt(d_k) | "
          "`A.one`, `A.two`, `A.three` and 2 more (5 of 12) | 61 + 30 |" in md, "mutation row with its killers")
    check("| `bleu_no_smoothing` | bleu | no exp smoothing \\| a pipe in the text | **build failed** | 5 + 0 |" in md,
          "a mutant that did not build is shown as such, and a pipe is escaped")
    check("Slowest mutant: `model_attention_no_scale`" in md, "the slowest mutant is named")
    check("A partial run: 3 of the 33 catalogued mutants." in md, "a partial run says so")
    check("Not killed: `beam_no_early_stop`, `bleu_no_smoothing`." in md, "the mutants not killed are listed")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    check(len(links) == 11, f"11 figures linked (4 runs, 4 ablation, 3 attention blocks), found {len(links)}")
    return links


def fixtures_follow_the_schema():
    """The fixtures are what `trepro train` and `trepro ablate` write: valid against
    reports/schema.json and reports/ablation_schema.json."""
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        print("note: python3-jsonschema missing; the fixtures are not validated against the schemas")
        return
    validate = os.path.join(HERE, "..", "..", "reports", "validate_report.py")
    reports = [os.path.join(FIXTURES, "tiny_run", "report.json")] + [
        os.path.join(FIXTURES, "ablation_heads", name, "report.json") for name in ("heads1", "heads4", "heads8")]
    result = subprocess.run([sys.executable, validate, *reports], capture_output=True, text=True)
    check(result.returncode == 0, f"run fixtures valid against reports/schema.json {result.stderr.strip()}")
    result = subprocess.run([sys.executable, validate, "--schema", os.path.join(HERE, "..", "..", "reports",
                             "ablation_schema.json"), os.path.join(FIXTURES, "ablation_heads", "summary.json")],
                            capture_output=True, text=True)
    check(result.returncode == 0, f"ablation fixture valid against reports/ablation_schema.json {result.stderr.strip()}")
    result = subprocess.run([sys.executable, validate, "--schema", os.path.join(HERE, "..", "..", "reports",
                             "mutation_score_schema.json"), os.path.join(FIXTURES, "mutation_score.json")],
                            capture_output=True, text=True)
    check(result.returncode == 0,
          f"mutation score fixture valid against reports/mutation_score_schema.json {result.stderr.strip()}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        fixtures_follow_the_schema()
        out = os.path.join(tmp, "svg")
        result = render([FIXTURES], out)
        check(result.returncode == 0, f"render the fixtures (stderr: {result.stderr.strip()})")
        if result.returncode != 0:
            return 1
        for link in summary_checks(out):
            path = os.path.join(out, link)
            try:
                root = ElementTree.parse(path).getroot()
                check(root.tag.endswith("svg") and len(list(root.iter())) > 50, f"{link} is a drawn SVG")
            except (OSError, ElementTree.ParseError) as e:
                check(False, f"{link} is a drawn SVG ({e})")

        again = os.path.join(tmp, "svg_again")
        render([FIXTURES], again)
        same = filecmp.cmpfiles(out, again, sorted(os.listdir(out)), shallow=False)[0]
        check(len(same) == len(os.listdir(out)), "rendering twice gives identical files")

        png = os.path.join(tmp, "png")
        result = render([os.path.join(FIXTURES, "attention_example.json")], png, "png")
        with open(os.path.join(png, "attention0_decoder_cross.png"), "rb") as f:
            check(result.returncode == 0 and f.read(8) == b"\x89PNG\r\n\x1a\n", "PNG output")

        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"kind": "train", "config": ')
        result = render([bad], os.path.join(tmp, "bad_out"))
        check(result.returncode == 2 and bad in result.stderr and "not JSON" in result.stderr,
              f"truncated JSON: exit 2 naming the file ({result.stderr.strip()})")
        with open(os.path.join(FIXTURES, "attention_example.json")) as f:
            attention = json.load(f)
        attention["attention"]["decoder_cross"][1][0] = attention["attention"]["decoder_cross"][1][0][:-1]
        with open(bad, "w") as f:
            json.dump(attention, f)
        result = render([bad], os.path.join(tmp, "bad_out"))
        check(result.returncode == 2 and "attention.decoder_cross[1][0]: shape (4, 4), expected (5, 4)"
              in result.stderr, f"wrong attention shape named ({result.stderr.strip()})")
        check(not os.path.exists(os.path.join(tmp, "bad_out", "summary.md")), "no summary written on bad input")
    print(f"render_test: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
