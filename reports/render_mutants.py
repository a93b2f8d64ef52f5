"""The mutation score (conformance/mutation-score's JSON, reports/mutation_score_schema.json) as
Markdown: the score, then one row per mutant (mutant, area, bug, killed by, time). Used by
reports/render.py for inputs of kind "mutation_score" and by mutation-score itself; needs no
plotting library.
"""
import os

# A long list of killers is cut to its first few: the JSON has them all.
SHOWN_KILLERS = 3


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _killers(entry):
    status = entry.get("status")
    if status != "killed":
        return f"**{status.replace('_', ' ')}**" if status else ""
    killers = entry.get("killed_by") or []
    # gtest_discover_tests names a parameterized test "Suite.Name/param  # GetParam() = ...".
    shown = ", ".join(f"`{_cell(k.split('  #')[0])}`" for k in killers[:SHOWN_KILLERS])
    more = len(killers) - SHOWN_KILLERS
    return shown + (f" and {more} more" if more > 0 else "") + f" ({len(killers)} of {entry.get('tests_run', 0)})"


def _seconds(entry):
    return f"{entry.get('build_seconds', 0):.0f} + {entry.get('test_seconds', 0):.0f}"


def markdown_lines(report, heading="#"):
    """The report as Markdown lines; `heading` is the level of its title."""
    mutants = report.get("mutants") or []
    killed = sum(1 for m in mutants if m.get("status") == "killed")
    lines = [f"{heading} Mutation score: {killed}/{len(mutants)} killed", ""]
    catalogued = report.get("catalogued", len(mutants))
    if catalogued != len(mutants):
        lines += [f"**A partial run: {len(mutants)} of the {catalogued} catalogued mutants.**", ""]
    facts = [f"commit `{str(report.get('commit', '?'))[:12]}`", f"{report.get('date', '?')}",
             f"{report.get('seconds', 0) / 60:.0f} min in all", f"per-test timeout {report.get('timeout_seconds', '?')} s"]
    lines += ["; ".join(facts) + ".", ""]
    base = report.get("baseline") or {}
    if base:
        lines += [f"Baseline: the {base.get('tests_run', 0)} tests that failed under a mutant, rerun on the "
                  f"unmutated tree: {len(base.get('failed') or [])} failed there too (they kill nothing).", ""]
    if mutants:
        slowest = max(mutants, key=lambda m: m.get("build_seconds", 0) + m.get("test_seconds", 0))
        lines += [f"Slowest mutant: `{slowest.get('name')}` ({_seconds(slowest)} s build + tests).", ""]
    lines += ["| mutant | area | bug | killed by | time (s, build + tests) |", "|---|---|---|---|---|"]
    for m in mutants:
        lines.append(f"| `{_cell(m.get('name', '?'))}` | {_cell(m.get('area', ''))} | {_cell(m.get('bug', ''))} | "
                     f"{_killers(m)} | {_seconds(m)} |")
    survivors = [m.get("name") for m in mutants if m.get("status") != "killed"]
    lines += ["", "Not killed: " + (", ".join(f"`{s}`" for s in survivors) if survivors else "none") + "."]
    return lines


def write_markdown(report, path):
    """Writes the Markdown rendering of `report` to `path` atomically."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(markdown_lines(report)) + "\n")
    os.replace(path + ".tmp", path)
