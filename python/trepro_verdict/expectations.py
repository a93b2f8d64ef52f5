"""Expectations: an implementation's known failures, each with its reason.

A text file, one expectation a line:

    PATTERN  # REASON
    model_rope_untied/*/grad.*          # rotary cross attention: gradients not written yet
    model_paper_post_relu/float32/logits  # fused GEMM in bf16, tracked in issue 12

PATTERN is a shell-style glob (fnmatch, case-sensitive) over result ids
"<case>/<golden dtype>/<tensor>"; REASON, after the first `#`, is required. Blank lines and
lines starting with `#` are comments. A failure whose id matches becomes "xfail" with the
reason of the first matching line, counted apart in the report; a pass that matches stays a
pass, marked "xpass" (the expectation may be out of date); "not provided" is never changed.
The report lists every expectation with how many results it matched.
"""
import dataclasses
import fnmatch


class ExpectationsError(ValueError):
    pass


@dataclasses.dataclass
class Expectation:
    pattern: str
    reason: str
    line: int
    matched: int = 0


def parse(text, source="expectations"):
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pattern, hash_, reason = line.partition("#")
        pattern, reason = pattern.strip(), reason.strip()
        if not hash_ or not reason:
            raise ExpectationsError(f"{source}:{number}: `{line}`: an expectation needs a reason after '#'")
        if not pattern or any(c.isspace() for c in pattern):
            raise ExpectationsError(f"{source}:{number}: `{line}`: one pattern (no spaces) before '#'")
        out.append(Expectation(pattern, reason, number))
    return out


def load(path):
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), path)


def apply(results, expectations):
    """Rewrites results in place: matching failures -> xfail (with the reason), matching passes
    -> xpass true. Counts the matches on each expectation."""
    for result in results:
        for e in expectations:
            if fnmatch.fnmatchcase(result["id"], e.pattern):
                if result["verdict"] == "fail":
                    e.matched += 1
                    result["verdict"] = "xfail"
                    result["reason"] = e.reason
                elif result["verdict"] == "pass":
                    e.matched += 1
                    result["xpass"] = True
                    result["reason"] = e.reason
                break
    return results
