"""The conformance report (JSON, reports/conformance_schema.json, shared with `trepro conform`):
per result (case x tensor here; op x direction x dtype for a backend) a verdict, pass / fail /
xfail / not_provided, the worst ratio of the tolerance and the tolerance itself; the suite's
commit, the golden manifest's sha256 and the tolerance table's version. Written atomically.
"""
import datetime
import hashlib
import json
import math
import os
import tempfile

from . import __version__, compare

SCHEMA_VERSION = 1
VERDICTS = ("pass", "fail", "xfail", "not_provided")


def tolerance_table_version(golden):
    """"sha256:" + the sha256 of the canonical JSON (sorted keys, no whitespace) of every number
    a verdict depends on: each case's manifest tolerance, the zero-gradient rule and the
    low-precision rules' constants. Two reports with the same version were judged alike."""
    table = dict(golden.tolerance_table(), low_precision=compare.low_precision_rules())
    canonical = json.dumps(table, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def finite_or_none(x):
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def summarize(results):
    counts = {v: sum(r["verdict"] == v for r in results) for v in VERDICTS}
    judged = [r for r in results if r["verdict"] in ("pass", "fail") and r.get("ratio") is not None]
    worst = max(judged, key=lambda r: r["ratio"], default=None)
    # fail: any failure; pass: none, and something passed; xfail: nothing passed, every failure
    # was expected; not_provided: nothing was judged.
    verdict = next((v for v in ("fail", "pass", "xfail") if counts[v]), "not_provided")
    return dict(counts, xpass=sum(bool(r.get("xpass")) for r in results), total=len(results),
                worst_ratio=worst["ratio"] if worst else None, worst_id=worst["id"] if worst else None,
                verdict=verdict)


def build(golden, subject, results, expectations=None, expectations_file=None):
    commit, dirty = golden.suite_commit()
    for r in results:
        r["ratio"] = finite_or_none(r.get("ratio"))
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "conformance",
        "tool": {"name": "trepro_verdict", "version": __version__},
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "subject": subject,
        "suite": {"commit": commit, "dirty": dirty, "golden_dir": golden.folder,
                  "golden_manifest_sha256": golden.manifest_sha256,
                  "tolerance_table_version": tolerance_table_version(golden)},
        "rules": {"manifest": golden.manifest.get("comparison", ""),
                  "low_precision": compare.low_precision_rules()},
        "expectations": {"file": expectations_file,
                         "entries": [{"pattern": e.pattern, "reason": e.reason, "line": e.line, "matched": e.matched}
                                     for e in (expectations or [])]},
        "results": results,
        "summary": summarize(results),
    }


def write_atomic(path, report):
    """Writes the JSON next to `path` and renames it over `path`: a reader never sees half a
    report. NaN and infinities are refused (ratios that are not finite are null)."""
    text = json.dumps(report, indent=1, allow_nan=False) + "\n"
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".report-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _ratio_text(r):
    if r["verdict"] == "not_provided":
        return ""
    return "ratio " + (f"{r['ratio']:.3g}" if r.get("ratio") is not None else "inf")


def _tolerance_text(t):
    if not t:
        return ""
    if t["rule"] == "manifest":
        return f"atol {t['atol']:.3g} x max|e| {t['scale']:.3g}, rtol {t['rtol']:.3g}"
    if t["rule"] == "flash":
        return f"<= {t['k']:g} x baseline {t['baseline_error']:.3g} + floor {t['floor']:.3g} ({t['baseline']})"
    return f"{t['norm']} error <= {t['bound']:g} x expected's"


def format_result(r):
    verdict = r["verdict"].upper().replace("_", " ") + (" (xpass)" if r.get("xpass") else "")
    text = f"  {verdict:<13} {r['tensor']:<48} {_ratio_text(r):<14} {_tolerance_text(r.get('tolerance'))}"
    extra = r.get("reason") if r["verdict"] in ("xfail", "not_provided") or r.get("xpass") else None
    if r["verdict"] == "fail" and r.get("detail"):
        extra = r["detail"]
    return text.rstrip() + (f"\n      {extra}" if extra else "")


def format_case(results, quiet=False):
    """The lines of one case: one per tensor, a run of "not provided" with one reason as one line
    (a whole case the model does not express); with quiet, passes left out."""
    lines, i = [], 0
    while i < len(results):
        r = results[i]
        j = i
        while (j + 1 < len(results) and r["verdict"] == "not_provided"
               and results[j + 1]["verdict"] == "not_provided" and results[j + 1].get("reason") == r.get("reason")):
            j += 1
        if j - i >= 2:
            first, last = results[i]["tensor"], results[j]["tensor"]
            lines.append(f"  {'NOT PROVIDED':<13} {j - i + 1} tensors, {first} .. {last}\n      {r.get('reason')}")
        elif not (quiet and r["verdict"] == "pass" and not r.get("xpass")):
            lines += [format_result(x) for x in results[i:j + 1]]
        i = j + 1
    return lines


def format_summary(report):
    s = report["summary"]
    worst = f"; worst ratio {s['worst_ratio']:.3g} ({s['worst_id']})" if s["worst_ratio"] is not None else ""
    return (f"{s['pass']} pass, {s['fail']} fail, {s['xfail']} xfail, {s['not_provided']} not provided"
            f" ({s['xpass']} xpass){worst}\nverdict: {s['verdict'].upper().replace('_', ' ')}")
