#!/usr/bin/python3
"""What a change to the committed cells moved, between two states of the sweeps: the tally, each
claim whose verdict, difference, p, Holm p or "within the cap" changed, each pooled seed
variance (its sd, degrees of freedom and the configs it leaves out) and the A/A calibration.

  reports/verdicts_moved.py                      HEAD's reports/ablations against the work tree's
  reports/verdicts_moved.py --since REV          REV's against the work tree's
  reports/verdicts_moved.py --old DIR --new DIR  two folders of sweeps (one subfolder a sweep)

Figures print as the tables of docs/results.md print them, the sds to 3 places. Run after
`scripts/reproduce results`, before writing a dated section of reports/ablations/README.md.
Exit 2, naming the file, on a summary that cannot be read.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from readme_tables import ABLATIONS, Summaries, difference, family, p_text, tally
from render_data import InputError

MOVED_FIELDS = {
    "verdict": lambda c: c.get("verdict"),
    "difference": lambda c: difference(c) if "test" in c else None,
    "p": lambda c: p_text(c.get("p_value")),
    "Holm p": lambda c: p_text(c.get("p_holm")),
    "within the cap": lambda c: bool(c.get("within_cap")),
}


def pools(summaries):
    """{(backend, recipe) as text: its pooled variance} over the sweeps, each pool once."""
    found = {}
    for name in summaries.names():
        pool = (summaries[name].get("variance_model") or {}).get("pool")
        if pool:
            key = f"{pool['backend']}, {json.dumps(pool.get('overrides', {}), sort_keys=True)}"
            found.setdefault(key, pool)
    return found


def pool_text(pool):
    """The pool's sds with their df, and the configs it leaves out."""
    parts = []
    for quantity, scale, unit in (("test_bleu", 1, ""), ("log_test_perplexity", 100, "%")):
        entry = pool.get(quantity)
        if entry:
            parts.append(f"{quantity} sd {scale * entry['sd']:.3f}{unit} on {entry['df']:.0f} df")
    left_out = sorted(c for entry in pool.get("left_out", []) for c in entry["configs"])
    return "; ".join(parts) + (f"; leaves out {', '.join(left_out)}" if left_out else "")


def calibration_text(summaries):
    for name in summaries.names():
        c = (summaries[name].get("variance_model") or {}).get("calibration")
        if c:
            return f"{c['factor']:.2f} [{c['interval'][0]:.2f}, {c['interval'][1]:.2f}] on {c['df']:.0f} df"
    return None


def moved(old, new):
    """The lines that say what moved from the sweeps old to new (Summaries each)."""
    lines = []
    before, after = tally(family(old)), tally(family(new))
    lines.append(f"tally: {before}" + (f" -> {after}" if after != before else " (unchanged)"))
    old_claims = {c["id"]: c for c in family(old) if "id" in c}
    for claim in family(new):
        was = old_claims.get(claim.get("id"))
        if was is None:
            lines.append(f"{claim.get('id')} ({claim.get('claim', '')}): new")
            continue
        changes = [f"{field} {text(was)} -> {text(claim)}" for field, text in MOVED_FIELDS.items()
                   if text(was) != text(claim)]
        if changes:
            lines.append(f"{claim['id']} ({claim.get('claim', '')}): " + "; ".join(changes))
    old_pools, new_pools = pools(old), pools(new)
    for key in sorted(old_pools.keys() | new_pools.keys()):
        a = pool_text(old_pools[key]) if key in old_pools else "none"
        b = pool_text(new_pools[key]) if key in new_pools else "none"
        if a != b:
            lines.append(f"pool {key}: {a} -> {b}")
    a, b = calibration_text(old), calibration_text(new)
    if a != b:
        lines.append(f"calibration: {a} -> {b}")
    return lines


def sweeps_at(revision, folder, into):
    """REV's committed summaries of the sweeps under folder, written under into; InputError where
    git cannot give them."""
    top = git("rev-parse", "--show-toplevel", cwd=folder).strip()
    relative = os.path.relpath(os.path.realpath(folder), os.path.realpath(top))
    os.makedirs(into)
    listed = git("ls-tree", "-r", "--name-only", revision, "--", relative, cwd=top).split("\n")
    for path in (p for p in listed if p.endswith("/summary.json") and p.count("/") == relative.count("/") + 2):
        name = os.path.basename(os.path.dirname(path))
        os.makedirs(os.path.join(into, name))
        with open(os.path.join(into, name, "summary.json"), "w", encoding="utf-8") as f:
            f.write(git("show", f"{revision}:{path}", cwd=top))
    return into


def git(*args, cwd):
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise InputError(f"git {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--since", metavar="REV", default="HEAD", help="the revision to compare with (default HEAD)")
    parser.add_argument("--old", metavar="DIR", help="the sweeps before, instead of a revision's")
    parser.add_argument("--new", metavar="DIR", default=ABLATIONS, help="the sweeps after (default: reports/ablations)")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            old = args.old or sweeps_at(args.since, args.new, os.path.join(scratch, "old"))
            print("\n".join(moved(Summaries(old), Summaries(args.new))))
    except InputError as e:
        print(f"verdicts_moved: {e}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, IndexError) as e:  # a summary the schema would refuse
        print(f"verdicts_moved: a summary under {args.old or args.since} or {args.new} lacks a field: {e!r} "
              "(reports/validate_report.py names it)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
