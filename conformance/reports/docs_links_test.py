#!/usr/bin/python3
"""Every relative link of README.md and docs/*.md resolves: the file or folder it names exists in
the repository (not outside it, not only in a git-ignored path such as runs/ or build/), and a
#fragment names a heading (GitHub's anchor of it) or an explicit anchor of the Markdown page it
points to. Links in fenced code blocks and code spans are not links; absolute URLs are not
checked (no network).

  conformance/reports/docs_links_test.py            the repository's README.md and docs/*.md
  conformance/reports/docs_links_test.py FILE.md..  those files instead

Each broken link is one line naming the file, its line, the link and what is missing; the exit
status is 1 when there is one. Before the repository's pages, the checker runs on pages written
to a temporary folder, with links it must accept and links it must reject, so that a checker that
passes everything fails the test.
"""
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s()]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*\"([^\"]*)\"", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*\"([^\"]*)\"", re.IGNORECASE)
ATX_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            continue
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        yield number, line


def heading_text(markdown):
    """A heading's text as GitHub renders it: code spans without their backticks, a link's or
    image's text without its target, HTML tags dropped."""
    text = re.sub(r"(`+)(.+?)\1", lambda m: m.group(2).strip(), markdown)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"<[^>]+>", "", text)


def slug(text):
    """GitHub's anchor of a heading: lower case, punctuation other than '-' and '_' dropped,
    each space a '-'."""
    return re.sub(r"[^\w\- ]", "", heading_text(text).strip().lower()).replace(" ", "-")


def anchors(path, cache={}):
    """The #fragments a Markdown page defines: its headings' anchors (a repeated one gets -1,
    -2, ... as on GitHub) and the ids and names of its <a> tags."""
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found, seen = set(), {}
        for _, line in prose_lines(text):
            heading = ATX_HEADING.match(line)
            if heading:
                base = slug(heading.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
            found.update(HTML_ANCHOR.findall(line))
        cache[path] = found
    return cache[path]


def links(text):
    """(line number, target) of every link outside code."""
    for number, line in prose_lines(text):
        prose = CODE_SPAN.sub("", line)
        for target in INLINE_LINK.findall(prose) + REFERENCE.findall(prose) + HTML_LINK.findall(prose):
            yield number, target.strip("<>")


def ignored_by_git(root, paths):
    """The paths (relative to root) that git ignores; none where root is not a git work tree."""
    if not paths:
        return set()
    try:
        result = subprocess.run(["git", "-C", root, "check-ignore", "--stdin"], input="\n".join(paths) + "\n",
                                capture_output=True, text=True)
    except OSError:
        return set()
    return set(result.stdout.split("\n")) - {""} if result.returncode in (0, 1) else set()


def broken_links(files, root):
    """One message a broken link: FILE:LINE: link 'TARGET': what is missing."""
    problems, existing = [], []
    for page in files:
        try:
            with open(page, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            problems.append(f"{os.path.relpath(page, root)}: cannot read: {getattr(e, 'strerror', None) or e}")
            continue
        name = os.path.relpath(page, root)
        for number, target in links(text):
            if SCHEME.match(target) or target.startswith("//"):
                continue  # a URL: not checked here
            where = f"{name}:{number}: link '{target}'"
            path, _, fragment = target.partition("#")
            path = urllib.parse.unquote(path)
            if not path:
                resolved = os.path.abspath(page)
            elif path.startswith("/"):
                resolved = os.path.normpath(os.path.join(root, path.lstrip("/")))
            else:
                resolved = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(page)), path))
            inside = os.path.relpath(resolved, root)
            if inside == ".." or inside.startswith(".." + os.sep):
                problems.append(f"{where}: points outside the repository ({resolved})")
                continue
            if not os.path.exists(resolved):
                problems.append(f"{where}: missing target {inside}")
                continue
            existing.append((where, inside))
            if fragment and resolved.endswith(".md") and os.path.isfile(resolved):
                if urllib.parse.unquote(fragment) not in anchors(resolved):
                    problems.append(f"{where}: {inside} has no heading or anchor '#{fragment}'")
    ignored = ignored_by_git(root, sorted({inside for _, inside in existing}))
    problems += [f"{where}: {inside} is ignored by git, so a clone does not have it"
                 for where, inside in existing if inside in ignored]
    return problems


def self_test():
    """The checker on made-up pages: what it must accept and what it must reject."""
    failures = []
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "reports", "runs"))
        with open(os.path.join(root, "reports", "runs", "README.md"), "w", encoding="utf-8") as f:
            f.write("# Runs\n\n## multi30k_deen (Multi30K De->En, `multi30k_deen.json`)\n\n## Notes\n\n## Notes\n")
        good = os.path.join(root, "docs", "good.md")
        with open(good, "w", encoding="utf-8") as f:
            f.write("# Good\n\n## Two BLEUs: why you \"cannot reproduce 27.3\"\n\n<a id=\"kept\"></a>\n"
                    "[runs](../reports/runs/README.md), [folder](../reports/runs/), [self](#good),\n"
                    "[heading](#two-bleus-why-you-cannot-reproduce-273), [explicit](#kept),\n"
                    "[other page](../reports/runs/README.md#multi30k_deen-multi30k-de-en-multi30k_deenjson),\n"
                    "[repeated](../reports/runs/README.md#notes-1), [url](https://example.org/x#y),\n"
                    "`[in a code span](missing.md)`\n\n```sh\n[in a fence](missing.md)\n```\n"
                    "[ref]: ../reports/runs/README.md\n")
        problems = broken_links([good], root)
        if problems:
            failures.append("links that resolve were rejected: " + "; ".join(problems))
        bad_links = {
            "[a](missing.md)": "missing target docs/missing.md",
            "[a](../reports/nothing/)": "missing target reports/nothing",
            "[a](#no-such-heading)": "has no heading or anchor '#no-such-heading'",
            "[a](../reports/runs/README.md#notes-2)": "has no heading or anchor '#notes-2'",
            "[a](../../outside.md)": "points outside the repository",
            "[ref]: gone.md": "missing target docs/gone.md",
            "<a href=\"gone.html\">a</a>": "missing target docs/gone.html",
        }
        for link, expected in bad_links.items():
            bad = os.path.join(root, "docs", "bad.md")
            with open(bad, "w", encoding="utf-8") as f:
                f.write(f"# Bad\n\nText.\n{link}\n")
            problems = broken_links([bad], root)
            if len(problems) != 1 or not problems[0].startswith("docs/bad.md:4: link ") or expected not in problems[0]:
                failures.append(f"{link} was not reported as '{expected}' on docs/bad.md:4: {problems}")
    return failures


def main(argv):
    failures = self_test()
    for failure in failures:
        print(f"docs_links: the checker itself is wrong: {failure}", file=sys.stderr)
    if failures:
        return 1
    files = [os.path.abspath(f) for f in argv] or [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", name) for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md"))
    root = ROOT
    problems = broken_links(files, root)
    for problem in problems:
        print(f"docs_links: {problem}", file=sys.stderr)
    count = sum(1 for page in files if os.path.exists(page) for _ in links(open(page, encoding="utf-8").read()))
    print(f"docs_links: {len(files)} pages, {count} links, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
