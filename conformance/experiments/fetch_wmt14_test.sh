#!/usr/bin/env bash
# scripts/fetch-wmt14 against a tiny WMT14 mirror served from 127.0.0.1 (no network, no trepro
# binary: its `--trepro` is a stub that records its arguments). The fixture archives have the
# real ones' names and internal layout: training/europarl-v7.de-en.{en,de} (beside a fr-en
# decoy), ./commoncrawl.de-en.{en,de} (members stored with "./"), the News Commentary v9
# pair, dev/newstest2013-{src.en,ref.de}.sgm with 3,000 segments and
# test-full/newstest2014-deen-{src.en,ref.de}.sgm with 3,003, over several documents.
# Checked: the layout `trepro prepare` reads and its line counts, the text byte for byte where
# the recipe has a rule (corpus order, a last line without its newline, a bare \r kept, a pair
# with invalid UTF-8 dropped, SGM entities and whitespace), reuse without downloading again,
# and the refusals: an archive with no checksum, a corrupt download, a corrupt cached archive,
# the 2,737-segment filtered test set; and --record-checksums.
# usage: fetch_wmt14_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
fetch=$source_dir/scripts/fetch-wmt14
python=/usr/bin/python3
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fetch_wmt14_test.XXXXXX")
server=
cleanup() {
  if [[ -n $server ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT
die() {
  echo "FAIL: $*" >&2
  exit 1
}

# The mirror: $scratch/mirror/wmt13/... and wmt14/..., as on statmt.org.
make_mirror() {  # DIR TEST_SEGMENTS
  "$python" - "$1" "$2" <<'PY'
import io, os, sys, tarfile
root, test_segments = sys.argv[1], int(sys.argv[2])

def archive(path, members):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

def sgm(kind, language, segments, per_doc=500):
    head = (f'<srcset setid="newstest" srclang="any">' if kind == "src"
            else f'<refset setid="newstest" srclang="any" trglang="{language}">')
    lines = [head]
    for first in range(0, segments, per_doc):
        lines.append(f'<doc sysid="{kind}" docid="doc{first // per_doc}" genre="news" origlang="en">')
        lines.append("<p>")
        for i in range(first, min(first + per_doc, segments)):
            text = f"{language} sentence {i + 1}"
            if i == 0:  # an entity and runs of spaces, as sacreBLEU cleans them
                text = f"  R&amp;D   {language}  sentence 1 &lt;b&gt; "
            lines.append(f'<seg id="{i - first + 1}">{text}</seg>')
        lines.append("</p>")
        lines.append("</doc>")
    lines.append("</srcset>" if kind == "src" else "</refset>")
    return ("\n".join(lines) + "\n").encode()

# Europarl: the second pair's German side is invalid UTF-8 (dropped); the files end without a
# newline; the fr-en pair beside them must not be read.
archive(f"{root}/wmt13/training-parallel-europarl-v7.tgz", [
    ("training/europarl-v7.de-en.en", b"europarl one\neuroparl two\neuroparl three"),
    ("training/europarl-v7.de-en.de", b"europarl eins\neuroparl zwei \xff\neuroparl drei"),
    ("training/europarl-v7.fr-en.en", b"decoy\n"),
    ("training/europarl-v7.fr-en.fr", b"leurre\n"),
])
# Common Crawl, stored with "./" as some tar versions write it; a bare \r inside a line stays.
archive(f"{root}/wmt13/training-parallel-commoncrawl.tgz", [
    ("./commoncrawl.de-en.en", b"crawl one\ncrawl two\r inside\n"),
    ("./commoncrawl.de-en.de", "crawl eins\ncrawl zwei äöü\n".encode()),
])
archive(f"{root}/wmt14/training-parallel-nc-v9.tgz", [
    ("training/news-commentary-v9.de-en.en", b"news one\n"),
    ("training/news-commentary-v9.de-en.de", b"news eins\n"),
])
archive(f"{root}/wmt14/dev.tgz", [
    ("dev/newstest2013-src.en.sgm", sgm("src", "en", 3000)),
    ("dev/newstest2013-ref.de.sgm", sgm("ref", "de", 3000)),
    ("dev/newstest2013.en", b"a plain copy the recipe does not read\n"),
])
archive(f"{root}/wmt14/test-full.tgz", [
    ("test-full/newstest2014-deen-src.en.sgm", sgm("src", "en", test_segments)),
    ("test-full/newstest2014-deen-ref.de.sgm", sgm("ref", "de", test_segments)),
])
PY
}

# A checksum list for the mirror's archives: sha256 with the size for all but dev.tgz, which gets
# an md5 claim alone (both algorithms are exercised).
make_checksums() {  # MIRROR LIST
  : >"$2"
  local file name
  for file in "$1"/wmt1?/*.tgz; do
    name=$(basename "$file")
    if [[ $name == dev.tgz ]]; then
      echo "$name - md5 $(md5sum "$file" | cut -d' ' -f1) fixture" >>"$2"
    else
      echo "$name $(stat -c %s "$file") sha256 $(sha256sum "$file" | cut -d' ' -f1) fixture" >>"$2"
    fi
  done
}

mirror=$scratch/mirror
make_mirror "$mirror" 3003
make_checksums "$mirror" "$scratch/checksums.txt"

# A free port on 127.0.0.1 for python's http.server; another process may take it between the
# probe and the bind, so a server that dies at once is started again on a new port.
for _ in 1 2 3 4 5; do
  port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$python" -m http.server --bind 127.0.0.1 --directory "$mirror" "$port" >"$scratch/server.log" 2>&1 &
  server=$!
  for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  curl -s -o /dev/null "http://127.0.0.1:$port/" && break
  kill "$server" 2>/dev/null || true
  server=
done
[[ -n $server ]] || die "could not start http.server on 127.0.0.1"
url=http://127.0.0.1:$port
gets() { grep -c '"GET /wmt1' "$scratch/server.log" || true; }

# 1. The whole recipe: downloads, checks, text, and the printed prepare command.
run_dir=$scratch/run
"$fetch" --mirror "$url" --downloads "$run_dir/downloads" --out "$run_dir/text" --prepared "$run_dir/prepared" \
  --checksums "$scratch/checksums.txt" >"$scratch/first.log" 2>&1 || { cat "$scratch/first.log" >&2; die "the recipe failed"; }
text=$run_dir/text
for file in train.en train.de newstest2013.en newstest2013.de newstest2014.en newstest2014.de SHA256SUMS BUILD.txt; do
  [[ -f $text/$file ]] || die "no $file in the text folder"
done
leftovers=$(find "$text" -mindepth 1 -not -name '*.en' -not -name '*.de' -not -name SHA256SUMS -not -name BUILD.txt)
[[ -z $leftovers ]] || die "the text folder holds more than the layout: $leftovers"
[[ -z $(find "$run_dir" -maxdepth 1 -name 'text.partial.*') ]] || die "a partial folder was left"
count() { wc -l <"$1" | tr -d ' '; }
[[ $(count "$text/newstest2014.en") == 3003 && $(count "$text/newstest2014.de") == 3003 ]] || die "newstest2014 is not 3,003 lines"
[[ $(count "$text/newstest2013.en") == 3000 && $(count "$text/newstest2013.de") == 3000 ]] || die "newstest2013 is not 3,000 lines"
printf 'europarl one\neuroparl three\ncrawl one\ncrawl two\r inside\nnews one\n' | cmp -s - "$text/train.en" ||
  { od -c "$text/train.en" >&2; die "train.en is not europarl (minus the invalid pair), then crawl, then news"; }
printf 'europarl eins\neuroparl drei\ncrawl eins\ncrawl zwei äöü\nnews eins\n' | cmp -s - "$text/train.de" ||
  { od -c "$text/train.de" >&2; die "train.de is not what the corpora hold, in their order"; }
[[ $(head -1 "$text/newstest2014.en") == 'R&D en sentence 1 <b>' ]] || die "SGM entities or whitespace not as sacreBLEU reads them: $(head -1 "$text/newstest2014.en")"
[[ $(sed -n 3003p "$text/newstest2014.de") == 'de sentence 3003' ]] || die "newstest2014.de's last line: $(sed -n 3003p "$text/newstest2014.de")"
[[ $(sed -n 2p "$text/newstest2013.de") == 'de sentence 2' ]] || die "newstest2013.de's second line"
grep -q "1 with invalid UTF-8" "$text/BUILD.txt" || die "BUILD.txt does not count the dropped pair"
(cd "$text" && sha256sum --quiet -c SHA256SUMS) || die "SHA256SUMS does not hold"
cp "$text/SHA256SUMS" "$scratch/first_run.SHA256SUMS"
grep -qF "trepro prepare $source_dir/experiments/configs/wmt14_ende_base.json --data-dir $text --out $run_dir/prepared" "$scratch/first.log" ||
  { cat "$scratch/first.log" >&2; die "the prepare command is not printed"; }
[[ $(gets) == 5 ]] || die "expected 5 downloads, the server saw $(gets)"
echo "ok: the recipe writes the layout prepare reads (train 5 pairs, newstest2013 3,000, newstest2014 3,003)"

# 2. A second run downloads nothing, keeps the text, and --trepro runs prepare (a stub here).
cat >"$scratch/trepro" <<STUB
#!/usr/bin/env bash
printf '%s\n' "\$@" >"$scratch/trepro.args"
STUB
chmod +x "$scratch/trepro"
"$fetch" --mirror "$url" --downloads "$run_dir/downloads" --out "$run_dir/text" --prepared "$run_dir/prepared" \
  --checksums "$scratch/checksums.txt" --trepro "$scratch/trepro" --config "$source_dir/experiments/configs/wmt14_ende_big.json" \
  >"$scratch/second.log" 2>&1 || { cat "$scratch/second.log" >&2; die "the second run failed"; }
[[ $(gets) == 5 ]] || die "the second run downloaded again"
grep -q "is whole (SHA256SUMS hold): kept" "$scratch/second.log" || die "the second run did not keep the text"
printf '%s\n' prepare "$source_dir/experiments/configs/wmt14_ende_big.json" --data-dir "$text" --out "$run_dir/prepared" |
  cmp -s - "$scratch/trepro.args" || { cat "$scratch/trepro.args" >&2; die "--trepro did not run prepare with the text"; }
echo "ok: a rerun reuses downloads and text; --trepro runs prepare"

# 3. A corrupt cached archive is refused, named, and set aside.
echo garbage >>"$run_dir/downloads/training-parallel-nc-v9.tgz"
rm -rf "$run_dir/text"
if "$fetch" --mirror "$url" --downloads "$run_dir/downloads" --out "$run_dir/text" \
  --checksums "$scratch/checksums.txt" >"$scratch/cached.log" 2>&1; then die "a corrupt cached archive was accepted"; fi
grep -q "training-parallel-nc-v9.tgz: .* bytes, but .* says" "$scratch/cached.log" ||
  { cat "$scratch/cached.log" >&2; die "the corrupt cached archive is not named"; }
[[ -f $run_dir/downloads/training-parallel-nc-v9.tgz.rejected && ! -e $run_dir/text ]] ||
  die "the corrupt cached archive was not set aside, or text was written"
echo "ok: a corrupt cached archive fails, naming it"

# 4. A corrupt download (the mirror's test-full.tgz changed after the list was made) fails its
#    checksum, naming the archive, and no text folder appears.
cp "$mirror/wmt14/test-full.tgz" "$scratch/test-full.tgz.good"
"$python" - "$mirror/wmt14/test-full.tgz" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0xFF  # same size: only the digest can tell
open(path, "wb").write(data)
PY
if "$fetch" --mirror "$url" --downloads "$scratch/corrupt/downloads" --out "$scratch/corrupt/text" \
  --checksums "$scratch/checksums.txt" >"$scratch/corrupt.log" 2>&1; then die "a corrupt archive passed its checksum"; fi
grep -q "test-full.tgz.*: sha256 [0-9a-f]*, but .* says" "$scratch/corrupt.log" ||
  { cat "$scratch/corrupt.log" >&2; die "the checksum failure does not name test-full.tgz"; }
grep -q "$url/wmt14/test-full.tgz does not match its checksums" "$scratch/corrupt.log" || die "the failure does not name the URL"
[[ ! -e $scratch/corrupt/text && ! -e $scratch/corrupt/downloads/test-full.tgz && -f $scratch/corrupt/downloads/test-full.tgz.rejected ]] ||
  die "a corrupt download was kept under its name, or text was written"
cp "$scratch/test-full.tgz.good" "$mirror/wmt14/test-full.tgz"
echo "ok: a corrupt download fails its checksum, naming test-full.tgz"

# 5. An archive the list does not name is refused, naming it; --record-checksums records it.
grep -v '^dev.tgz ' "$scratch/checksums.txt" >"$scratch/partial_list.txt"
if "$fetch" --mirror "$url" --downloads "$scratch/unlisted/downloads" --out "$scratch/unlisted/text" \
  --checksums "$scratch/partial_list.txt" >"$scratch/unlisted.log" 2>&1; then die "an archive with no checksum was used"; fi
grep -q "no checksum for dev.tgz in $scratch/partial_list.txt" "$scratch/unlisted.log" ||
  { cat "$scratch/unlisted.log" >&2; die "the refusal does not name dev.tgz"; }
[[ ! -e $scratch/unlisted/downloads/dev.tgz ]] || die "an unchecked archive was kept"
"$fetch" --mirror "$url" --downloads "$scratch/unlisted/downloads" --out "$scratch/unlisted/text" \
  --checksums "$scratch/partial_list.txt" --record-checksums >"$scratch/record.log" 2>&1 ||
  { cat "$scratch/record.log" >&2; die "--record-checksums failed"; }
grep -q "^dev.tgz  *$(stat -c %s "$mirror/wmt14/dev.tgz")  *sha256  *$(sha256sum "$mirror/wmt14/dev.tgz" | cut -d' ' -f1)  *recorded-unverified:" \
  "$scratch/partial_list.txt" || { cat "$scratch/partial_list.txt" >&2; die "dev.tgz's sha256 was not recorded"; }
[[ $(grep -c '^test-full.tgz ' "$scratch/partial_list.txt") == 1 ]] || die "an archive that had a sha256 got another"
cmp -s "$scratch/unlisted/text/SHA256SUMS" "$scratch/first_run.SHA256SUMS" || die "the recorded run wrote other text"
# An archive whose only claim is an md5 gets a sha256 line once that md5 held.
cp "$scratch/checksums.txt" "$scratch/md5_list.txt"
"$fetch" --mirror "$url" --downloads "$scratch/unlisted/downloads" --out "$scratch/unlisted/text" \
  --checksums "$scratch/md5_list.txt" --record-checksums >"$scratch/record_md5.log" 2>&1 ||
  { cat "$scratch/record_md5.log" >&2; die "--record-checksums after an md5 failed"; }
grep -q "^dev.tgz  *[0-9]*  *sha256  *$(sha256sum "$mirror/wmt14/dev.tgz" | cut -d' ' -f1)  *recorded:.*after-the-claims-above-held" \
  "$scratch/md5_list.txt" || { cat "$scratch/md5_list.txt" >&2; die "dev.tgz's sha256 was not added after its md5 held"; }
[[ $(wc -l <"$scratch/md5_list.txt") == $(($(wc -l <"$scratch/checksums.txt") + 1)) ]] || die "--record-checksums added more than dev.tgz's line"
echo "ok: an archive with no checksum is refused by name; --record-checksums fills the list"

# 6. The filtered test set (2,737 segments) in test-full.tgz's place is refused, saying so.
make_mirror "$scratch/filtered" 2737
cp "$scratch/filtered/wmt14/test-full.tgz" "$mirror/wmt14/test-full.tgz"
make_checksums "$mirror" "$scratch/filtered_list.txt"
if "$fetch" --mirror "$url" --downloads "$scratch/filtered/downloads" --out "$scratch/filtered/text" \
  --checksums "$scratch/filtered_list.txt" >"$scratch/filtered.log" 2>&1; then die "a 2,737-line newstest2014 was accepted"; fi
grep -q "newstest2014-deen-src.en.sgm: 2,737 segments, not the 3,003 expected (2,737 is the filtered" "$scratch/filtered.log" ||
  { cat "$scratch/filtered.log" >&2; die "the refusal of the filtered set does not say why"; }
[[ ! -e $scratch/filtered/text && -z $(find "$scratch/filtered" -maxdepth 1 -name 'text.partial.*') ]] ||
  die "a failed build left a text folder"
echo "ok: the 2,737-segment filtered newstest2014 is refused"
