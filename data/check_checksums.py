#!/usr/bin/python3
"""Checks the Multi30K files the repository ships (data/multi30k/, see its README.md) against
data/multi30k/SHA256SUMS (sha256sum's format, so `sha256sum -c SHA256SUMS` in that folder says
the same): every split the project reads is listed, every listed file is there with its sum, and
no .gz file lies there unlisted. Prints one line a file and fails (exit 1) naming each file that
is missing, differs or is not listed. ctest runs it as multi30k_checksums.

  /usr/bin/python3 data/check_checksums.py [FOLDER]     FOLDER default: data/multi30k beside this script
"""
import hashlib
import os
import sys

# The splits the data ships (data/multi30k/README.md), each in German and English.
SPLITS = ("train", "val", "test_2016_flickr", "test_2017_flickr", "test_2017_mscoco")
EXPECTED = sorted(f"{split}.{language}.gz" for split in SPLITS for language in ("de", "en"))


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_sums(path):
    """{file name: sha256} from a sha256sum listing ("<64 hex>  <name>", or " *<name>" in binary mode)."""
    sums = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            digest, separator, name = line[:64], line[64:66], line[66:]
            if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) \
                    or separator not in ("  ", " *") or not name:
                raise ValueError(f"{path} line {number}: not a sha256sum line: {line!r}")
            if name in sums:
                raise ValueError(f"{path} line {number}: {name} is listed twice")
            sums[name] = digest
    return sums


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                "multi30k")
    listing = os.path.join(folder, "SHA256SUMS")
    if not os.path.isdir(folder):
        print(f"FAIL {folder}: no such folder (the Multi30K data ships with the repository in data/multi30k/)")
        return 1
    if not os.path.isfile(listing):
        print(f"FAIL {listing}: missing")
        return 1
    try:
        sums = read_sums(listing)
    except (ValueError, UnicodeDecodeError) as e:
        print(f"FAIL {e}")
        return 1
    failures = []
    for name in EXPECTED:
        if name not in sums:
            failures.append(f"{os.path.join(folder, name)}: not listed in {listing}")
    for name, expected in sorted(sums.items()):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            failures.append(f"{path}: missing (SHA256SUMS lists it)")
            continue
        actual = sha256(path)
        if actual != expected:
            failures.append(f"{path}: sha256 {actual}, SHA256SUMS says {expected}")
        else:
            print(f"ok   {path}")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".gz") and name not in sums and name not in EXPECTED:  # EXPECTED: said above
            failures.append(f"{os.path.join(folder, name)}: not listed in {listing}")
    for failure in failures:
        print(f"FAIL {failure}")
    if failures:
        print(f"check_checksums: {len(failures)} problem(s) in {folder}")
        return 1
    print(f"check_checksums: {len(sums)} files match {listing}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
