#!/usr/bin/python3
"""The text steps of scripts/fetch-wmt14 (docs/wmt14.md): members out of the WMT archives, the
training corpora joined into one line-aligned pair of files, and the SGM test sets turned into
plain lines. The output is what `trepro prepare` reads with the wmt14_ende configs: raw,
untokenized UTF-8, one sentence a line, the same line count on both sides.

  wmt14_text.py extract ARCHIVE DEST MEMBER...
      Writes each MEMBER of the tar archive ARCHIVE (gzip or plain) to DEST/MEMBER, in one pass
      over the archive. A member stored as ./MEMBER counts as MEMBER. Fails naming the archive
      and every member it lacks.

  wmt14_text.py concat OUT_PREFIX SOURCE TARGET CORPUS...
      Appends the pairs of each CORPUS (CORPUS.SOURCE and CORPUS.TARGET, read as bytes, split at
      "\\n" alone: a bare "\\r" inside a line stays in it) to OUT_PREFIX.SOURCE and
      OUT_PREFIX.TARGET, in the order given. A last line without its newline gets one, so the
      next corpus starts on a line of its own. Fails when a corpus's two files have different
      line counts. A pair is dropped, and counted, when either side is not valid UTF-8 or is
      longer than 1 MiB: `trepro prepare` stops at such a line (experiments/data/text_lines.h)
      instead of skipping it. Everything else is kept byte for byte (empty lines too: the
      configs' data.max_len_filter drops and counts those).

  wmt14_text.py sgm SOURCE_SGM REFERENCE_SGM OUT_SOURCE OUT_REFERENCE LINES
      One line a <seg> of each file: the text between the tags, XML's five named entities and
      numeric character references decoded (WMT stopped escaping text in its SGM files, so on
      the real test sets this changes nothing: the count of segments it changed is printed), then
      whitespace runs collapsed to one space and the ends stripped, as sacreBLEU does when it
      reads these files, so the references are sacreBLEU's. Fails when the two files' documents
      and segment ids differ, or when either has other than LINES segments.

Each command prints what it did, one line a file or corpus, on stdout.
"""
import os
import re
import sys
import tarfile

MAX_LINE_BYTES = 1 << 20  # experiments/data/text_lines.h, kMaxLineBytes


class Failure(Exception):
    pass


def extract(archive, dest, members):
    wanted = set(members)
    found = set()
    try:
        with tarfile.open(archive, "r|*") as tar:
            for info in tar:
                name = info.name[2:] if info.name.startswith("./") else info.name
                if name not in wanted or not info.isfile():
                    continue
                target = os.path.join(dest, name)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                source = tar.extractfile(info)
                with open(target + ".partial", "wb") as out:
                    for block in iter(lambda: source.read(1 << 20), b""):
                        out.write(block)
                os.replace(target + ".partial", target)
                found.add(name)
                print(f"{os.path.basename(archive)}: {name} ({info.size:,} bytes)")
                if found == wanted:
                    break
    except (tarfile.TarError, EOFError, OSError) as error:
        raise Failure(f"{archive}: cannot read it as a tar archive ({error})") from error
    missing = sorted(wanted - found)
    if missing:
        raise Failure(f"{archive} has no {', '.join(missing)}: not the archive this recipe expects")


def lines_of(path):
    """The lines of a file as bytes, without their "\\n" (a last line without one included)."""
    with open(path, "rb") as f:
        for line in f:
            yield line[:-1] if line.endswith(b"\n") else line


def usable(line):
    if len(line) > MAX_LINE_BYTES:
        return "long"
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return "utf8"
    return None


def concat(out_prefix, source, target, corpora):
    with open(f"{out_prefix}.{source}", "ab") as out_source, open(f"{out_prefix}.{target}", "ab") as out_target:
        total = 0
        for corpus in corpora:
            source_path, target_path = f"{corpus}.{source}", f"{corpus}.{target}"
            source_lines, target_lines = lines_of(source_path), lines_of(target_path)
            pairs = kept = 0
            dropped = {"utf8": 0, "long": 0}
            while True:
                a = next(source_lines, None)
                b = next(target_lines, None)
                if a is None or b is None:
                    if a is None and b is None:
                        break
                    shorter, longer = (source_path, target_path) if a is None else (target_path, source_path)
                    raise Failure(f"{shorter} ends after {pairs:,} lines but {longer} has more: "
                                  "the two sides are not line-aligned")
                pairs += 1
                problem = usable(a) or usable(b)
                if problem:
                    dropped[problem] += 1
                    continue
                out_source.write(a + b"\n")
                out_target.write(b + b"\n")
                kept += 1
            total += kept
            print(f"{os.path.basename(corpus)}: {pairs:,} pairs, {kept:,} kept; dropped: "
                  f"{dropped['utf8']:,} with invalid UTF-8, {dropped['long']:,} over 1 MiB")
        print(f"{os.path.basename(out_prefix)}: {total:,} pairs from {len(corpora)} corpora")


SEG = re.compile(r"<seg\b([^>]*)>(.*)</seg>")
SEG_ID = re.compile(r'\bid\s*=\s*"?([^"\s>]*)')
DOC_ID = re.compile(r'\bdocid\s*=\s*"([^"]*)"')
ENTITY = re.compile(r"&(amp|lt|gt|quot|apos|#[0-9]+|#[xX][0-9a-fA-F]+);")
NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def decode_entity(match):
    name = match.group(1)
    if name in NAMED:
        return NAMED[name]
    code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else match.group(0)


def read_sgm(path):
    """[(docid, segid, text)], and how many segments entity decoding changed."""
    try:
        with open(path, encoding="utf-8", newline="\n") as f:
            text = f.read()
    except UnicodeDecodeError as error:
        raise Failure(f"{path}: not UTF-8 ({error})") from error
    segments, changed, docid = [], 0, None
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("<doc"):
            found = DOC_ID.search(stripped)
            docid = found.group(1) if found else None
        elif stripped.startswith("<seg"):
            match = SEG.search(stripped)
            if not match:
                raise Failure(f"{path} line {number}: a <seg> that does not end on its line with </seg>")
            segid = SEG_ID.search(match.group(1))
            decoded = ENTITY.sub(decode_entity, match.group(2))
            changed += decoded != match.group(2)
            segments.append((docid, segid.group(1) if segid else None, re.sub(r"\s+", " ", decoded.strip())))
    return segments, changed


def sgm(source_sgm, reference_sgm, out_source, out_reference, lines):
    source, source_changed = read_sgm(source_sgm)
    reference, reference_changed = read_sgm(reference_sgm)
    for path, segments in ((source_sgm, source), (reference_sgm, reference)):
        if len(segments) != lines:
            hint = (" (2,737 is the filtered newstest2014 of test-filtered.tgz, sacreBLEU's wmt14;"
                    " the paper's is the full set of test-full.tgz)" if len(segments) == 2737 else "")
            raise Failure(f"{path}: {len(segments):,} segments, not the {lines:,} expected{hint}")
    for index, (s, r) in enumerate(zip(source, reference)):
        if s[:2] != r[:2]:
            raise Failure(f"{source_sgm} and {reference_sgm} differ at segment {index + 1}: document {s[0]} "
                          f"segment {s[1]} against document {r[0]} segment {r[1]}: not a source and its reference")
    for path, segments, changed, out in ((source_sgm, source, source_changed, out_source),
                                         (reference_sgm, reference, reference_changed, out_reference)):
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            for _, _, text in segments:
                f.write(text + "\n")
        empty = sum(1 for _, _, text in segments if not text)
        print(f"{os.path.basename(out)}: {len(segments):,} lines from {os.path.basename(path)}; "
              f"{changed:,} with an entity decoded, {empty:,} empty")


def main(argv):
    if len(argv) >= 3 and argv[0] == "extract":
        extract(argv[1], argv[2], argv[3:])
    elif len(argv) >= 5 and argv[0] == "concat":
        concat(argv[1], argv[2], argv[3], argv[4:])
    elif len(argv) == 6 and argv[0] == "sgm":
        sgm(argv[1], argv[2], argv[3], argv[4], int(argv[5]))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Failure as failure:
        sys.stderr.write(f"wmt14_text.py: {failure}\n")
        sys.exit(1)
