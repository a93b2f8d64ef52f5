"""python -m trepro_verdict --model MODULE:CALLABLE --out report.json [options]

Runs the callable on transformer-repro's golden model cases, prints a verdict and ratio per
tensor and writes the conformance report (reports/conformance_schema.json).

Exit status: 0 no failure (expected failures, xfail, aside) and something was judged; 1 a
failure; 2 a usage, golden or expectations error; 3 nothing was provided.
"""
import argparse
import importlib
import importlib.util
import os
import sys

from . import compare, expectations as expectations_module, golden as golden_module, naming, report, verdict


def load_callable(spec):
    """MODULE:NAME (an importable module) or PATH.py:NAME (a file)."""
    module_part, sep, name = spec.rpartition(":")
    if not sep or not module_part or not name:
        raise ValueError(f"--model {spec!r}: expected MODULE:CALLABLE or FILE.py:CALLABLE")
    if module_part.endswith(".py") or os.sep in module_part:
        path = os.path.abspath(module_part)
        sys.path.insert(0, os.path.dirname(path))
        loader_spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        if loader_spec is None:
            raise ValueError(f"--model: cannot load {path}")
        module = importlib.util.module_from_spec(loader_spec)
        loader_spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(module_part)
    target = module
    for attribute in name.split("."):
        target = getattr(target, attribute)
    if not callable(target):
        raise ValueError(f"--model {spec!r} is not callable")
    return target


def parse_prefixes(items):
    prefixes = {}
    for item in items or []:
        old, sep, new = item.partition("=")
        if not sep:
            raise ValueError(f"--prefix {item!r}: expected THEIRS=OURS, e.g. model.encoder.=encoder.")
        prefixes[old] = new
    return prefixes


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m trepro_verdict", description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="MODULE:CALLABLE or FILE.py:CALLABLE (python/README.md)")
    parser.add_argument("--out", required=True, help="the JSON report to write")
    parser.add_argument("--golden", help="the repository's golden/ folder (default: $TREPRO_GOLDEN_DIR, "
                                         "else the checkout this package is in)")
    parser.add_argument("--state-dict", help="a safetensors state dict of the model in nn.Transformer names: "
                                             "cases with other parameters are not provided")
    parser.add_argument("--prefix", action="append", metavar="THEIRS=OURS",
                        help="a module prefix of the model's names and the project's (repeatable; default "
                             + " ".join(f"{k}={v}" for k, v in naming.DEFAULT_PREFIXES.items()) + ")")
    parser.add_argument("--expectations", help="known failures: lines `PATTERN  # REASON` (xfail)")
    parser.add_argument("--case", action="append", default=[], metavar="PATTERN",
                        help="only cases whose <name>/<dtype> match (fnmatch; repeatable)")
    parser.add_argument("--precision", choices=sorted(compare.FORMATS),
                        help="what the model computes in (default: what the callable says, else its logits' dtype)")
    parser.add_argument("--low-precision", choices=compare.LOW_PRECISION_SCOPES,
                        help="bfloat16 / float16 baseline: gemm (linear operands only, the default) or all")
    parser.add_argument("--quiet", action="store_true", help="print only what did not pass, and the summary")
    args = parser.parse_args(argv)

    try:
        golden = golden_module.Golden(args.golden)
        expectations = expectations_module.load(args.expectations) if args.expectations else []
        prefix_map = parse_prefixes(args.prefix) or None
        shapes = None
        if args.state_dict:
            shapes = verdict.state_dict_shapes(args.state_dict, prefix_map or naming.DEFAULT_PREFIXES)
            print(f"--state-dict {args.state_dict}: {len(shapes)} parameters in project names")
        model = load_callable(args.model)
    except (golden_module.GoldenError, expectations_module.ExpectationsError, ValueError, OSError,
            ImportError, AttributeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    options = verdict.Options(precision=args.precision, low_precision=args.low_precision, prefix_map=prefix_map,
                              state_dict_shapes=shapes, cases=tuple(args.case))
    if not verdict.selected_cases(golden, options.cases):
        print(f"error: no golden model case matches {args.case}", file=sys.stderr)
        return 2

    def on_case(case, results):
        expectations_module.apply(results, expectations)
        precision = next((r["precision"] for r in results if r["precision"]), None)
        print(f"{case.label}" + (f" (computed in {precision})" if precision else ""))
        for line in report.format_case(results, args.quiet):
            print(line)
        sys.stdout.flush()

    try:
        results = verdict.run(model, golden, options, on_case)
    except golden_module.GoldenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    subject = {"kind": "model", "name": args.model, "state_dict": args.state_dict,
               "precision": args.precision, "low_precision": args.low_precision}
    full = report.build(golden, subject, results, expectations, args.expectations)
    report.write_atomic(args.out, full)
    print(report.format_summary(full))
    for e in full["expectations"]["entries"]:
        if not e["matched"]:
            print(f"note: expectation line {e['line']} `{e['pattern']}` matched nothing")
    print(f"report: {args.out}")
    return {"pass": 0, "xfail": 0, "fail": 1, "not_provided": 3}[full["summary"]["verdict"]]


if __name__ == "__main__":
    sys.exit(main())
