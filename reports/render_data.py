"""What reports/render.py reads: run reports (report.json of `trepro train`, with the test
results `trepro evaluate` adds), ablation summaries (summary.json of `trepro ablate`,
schema_version 2: one cell per variant and seed), and attention files (`trepro attention`).

Every field is read through the accessors here, so that a report missing a part (a run still
going, one never evaluated) renders with blanks instead of failing, while a file that is not a
report at all is an error naming it.
"""
import os
import re

import validate_report  # reports/, beside this file; needs python3-jsonschema (scripts/setup)
from report_json import InputError, load_json  # noqa: F401 (render.py and readme_tables.py import them from here)


def check_schema(path, data):
    """A run report or ablation summary against its schema (reports/validate_report.py), so that a
    field of the wrong shape is named here instead of failing somewhere in the rendering."""
    validator = validate_report.validator_for(validate_report.default_schema(data))
    error = next(iter(sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise InputError(f"{path}: {where}: {error.message}")


def get(obj, *keys, default=None):
    """obj[k1][k2]... or default when any level is missing."""
    for key in keys:
        if not isinstance(obj, dict) or key not in obj:
            return default
        obj = obj[key]
    return obj


class Run:
    """One run report. `name` is the report's folder (runs/<name>/report.json) unless given."""

    def __init__(self, path, data, name=None):
        if not isinstance(data, dict) or get(data, "kind") != "train" or not isinstance(data.get("config"), dict):
            raise InputError(f"{path}: not a run report (expected an object with kind \"train\" and a config)")
        if "steps" in data and "curve" not in data:
            raise InputError(f"{path}: a report of schema_version {data.get('schema_version')!r} (every step under "
                             f"\"steps\"); `trepro upgrade-report {path}` rewrites it with the training curve")
        self.path = path
        self.data = data
        self.name = name or _run_name(path)
        self.group, self.seed = None, None  # an ablation cell's variant and seed

    def model(self, key, default=None):
        return get(self.data, "config", "model", key, default=default)

    def train(self, *keys, default=None):
        return get(self.data, "config", "train", *keys, default=default)

    def curve(self):
        """The training curve: single steps, then windows of 50 (reports/schema.json)."""
        return [s for s in self.data.get("curve") or [] if isinstance(s, dict) and "step" in s]

    def validation(self):
        return [v for v in self.data.get("validation") or [] if isinstance(v, dict) and "step" in v]

    def direction(self):
        src = get(self.data, "data", "source_language")
        tgt = get(self.data, "data", "target_language")
        dataset = get(self.data, "data", "dataset", default="?")
        return f"{dataset} {src}-{tgt}" if src and tgt else dataset

    def decoded_test_sets(self):
        """The test splits its checkpoint was decoded on: every split under "tests" (all three of
        Multi30K's for a cell ablate ran since it decodes them), else the one "test" names."""
        tests = self.data.get("tests")
        if isinstance(tests, dict) and tests:
            return sorted(tests)
        split = get(self.data, "test", "split")
        return [split] if isinstance(split, str) else []

    # Test results (reports/schema.json "test"): training writes loss and perplexity of its best
    # checkpoint, `trepro evaluate` the BLEU figures and the decoding.
    def bleu(self):
        return _number(get(self.data, "test", "bleu"))

    def bleu_signature(self):
        return get(self.data, "test", "bleu_signature")

    def bleu_tokenized_lowercase(self):
        return _number(get(self.data, "test", "bleu_tok_lc"))

    def test_perplexity(self):
        return _number(get(self.data, "test", "perplexity"))

    def best_validation_perplexity(self):
        values = [v.get("perplexity") for v in self.validation() if isinstance(v.get("perplexity"), (int, float))]
        return min(values) if values else None

    def tokens_per_second(self):
        return _number(get(self.data, "timings", "target_tokens_per_second"))

    def train_seconds(self):
        return _number(get(self.data, "timings", "train_seconds"))


def _run_name(path):
    """The report's folder: runs/<name>/report.json -> name; an ablation cell's
    <variant>/seed_<S>/report.json -> "<variant> seed <S>"."""
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(folder)
    match = re.fullmatch(r"seed_([0-9]+)", base)
    if match and os.path.basename(os.path.dirname(folder)):
        return f"{os.path.basename(os.path.dirname(folder))} seed {match.group(1)}"
    return base or path


def _number(value):
    """A JSON number as float; None for anything else (missing, null, a string)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class Cell:
    """One (variant, seed) cell of an ablation: its entry in the summary and, once it has run,
    its run report (named "<variant> seed <S>")."""

    def __init__(self, variant, entry, run):
        self.variant = variant
        self.seed = entry["seed"]
        self.status = entry.get("status")
        self.entry = entry
        self.run = run


class Variant:
    """One variant of an ablation: its overrides, its cells (one per seed), the statistics of its
    metrics over seeds and its comparison with the baseline (reports/ablation_schema.json);
    `recipe` names the spec's second recipe it runs under (a claim's recipe check), else None."""

    def __init__(self, name, set_, cells, statistics, vs_baseline, recipe=None):
        self.name = name
        self.set = set_
        self.recipe = recipe
        self.cells = cells
        self.statistics = statistics
        self.vs_baseline = vs_baseline

    def runs(self):
        return [c.run for c in self.cells if c.run is not None]

    def not_run(self):
        return [c for c in self.cells if c.run is None]

    def mean(self, metric):
        """The mean over seeds of a metric of the cells (best_validation_perplexity,
        test_perplexity, test_bleu, test_bleu_tok_lc), or None."""
        entry = self.statistics.get(metric)
        return entry["mean"] if entry else None


def _comparison(path, where, entry):
    """A vs_baseline entry or a claim: metric, per_seed [{seed, and advantage (a number),
    diverged (the variants whose training diverged) or missing (a metric)}], verdict and the
    optional advantage, interval, seed_interval, p_value, p_value_sacrebleu and method, checked for
    their types."""
    if not isinstance(entry, dict) or not isinstance(entry.get("verdict"), str) \
            or not isinstance(entry.get("per_seed"), list):
        raise InputError(f"{path}: {where}: expected an object with \"per_seed\" and a \"verdict\"")
    for j, seed in enumerate(entry["per_seed"]):
        outcome_ok = isinstance(seed, dict) and (
            _number(seed.get("advantage")) is not None
            or (isinstance(seed.get("diverged"), list) and seed["diverged"]
                and all(isinstance(name, str) for name in seed["diverged"]))
            or isinstance(seed.get("missing"), str))
        if not outcome_ok or _number(seed.get("seed")) is None:
            raise InputError(f"{path}: {where}.per_seed[{j}]: expected a number \"seed\" and a number "
                             "\"advantage\", a list \"diverged\" or a string \"missing\"")
    for key in ("interval", "seed_interval"):
        interval = entry.get(key)
        if interval is not None and (not isinstance(interval, list) or len(interval) != 2
                                     or any(_number(v) is None for v in interval)):
            raise InputError(f"{path}: {where}.{key}: expected [low, high]")
    for key in ("advantage", "p_value", "p_value_sacrebleu"):
        if key in entry and _number(entry[key]) is None:
            raise InputError(f"{path}: {where}.{key}: expected a number")
    return entry


class Ablation:
    """A summary of `trepro ablate` (reports/ablation_schema.json, schema_version 2): its name and
    description, the seeds, its variants with one cell per seed (reports relative to the summary;
    cells not run yet have none), the baseline, the bootstrap settings and the claims."""

    SCHEMA_VERSION = 2

    def __init__(self, path, data):
        version = data.get("schema_version")
        if version != self.SCHEMA_VERSION:
            raise InputError(f"{path}: ablation summary schema_version {version!r}, expected "
                             f"{self.SCHEMA_VERSION} (one cell per variant and seed, <variant>/seed_<S>/report.json; "
                             "`trepro ablate SPEC --out DIR` writes it)")
        variants = data.get("variants")
        if not isinstance(variants, list) or not variants:
            raise InputError(f"{path}: an ablation summary needs a non-empty \"variants\" list")
        self.path = path
        self.data = data
        self.name = data.get("name") or os.path.splitext(os.path.basename(path))[0]
        self.description = data.get("description", "")
        seeds = data.get("seeds")
        if not isinstance(seeds, list) or not seeds or any(_number(s) is None for s in seeds):
            raise InputError(f"{path}: an ablation summary needs a non-empty \"seeds\" list")
        self.seeds = seeds
        self.baseline = data.get("baseline")
        self.backend = data.get("backend")  # absent in summaries written before it was recorded
        decoding = data.get("decoding")  # likewise
        if decoding is not None and not (isinstance(decoding, dict)
                                         and all(isinstance(decoding.get(k), str) for k in ("split", "checkpoint", "search"))):
            raise InputError(f"{path}: \"decoding\": expected null or an object with strings \"split\", "
                             "\"checkpoint\" and \"search\"")
        self.decoding = decoding
        self.bootstrap = data.get("bootstrap") if isinstance(data.get("bootstrap"), dict) else {}
        self.variants = [self._variant(path, i, v) for i, v in enumerate(variants)]
        claims = data.get("claims", [])
        if not isinstance(claims, list):
            raise InputError(f"{path}: \"claims\": expected a list")
        self.claims = [_comparison(path, f"claims[{i}]", c) for i, c in enumerate(claims)]
        for i, claim in enumerate(self.claims):
            directed = all(isinstance(claim.get(k), str) for k in ("better", "worse")) \
                and not any(k in claim for k in ("equivalent", "margin"))
            pair = claim.get("equivalent")
            equivalence = isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, str) for v in pair) \
                and _number(claim.get("margin")) is not None and claim["margin"] > 0 \
                and not any(k in claim for k in ("better", "worse"))
            if not all(isinstance(claim.get(k), str) for k in ("claim", "metric")) or directed == equivalence:
                raise InputError(f"{path}: claims[{i}]: expected \"claim\", \"metric\" and either \"better\" and "
                                 "\"worse\" or \"equivalent\" (two variants) and \"margin\" (> 0)")

    def runs(self):
        """The run reports of every cell that has run, variant by variant, seed by seed."""
        return [r for v in self.variants for r in v.runs()]

    @staticmethod
    def _variant(path, i, variant):
        where = f"variants[{i}]"
        if not isinstance(variant, dict) or not isinstance(variant.get("name"), str) \
                or not isinstance(variant.get("cells"), list) or not variant["cells"]:
            raise InputError(f"{path}: {where}: expected an object with a \"name\" and a non-empty \"cells\" list")
        name = variant["name"]
        cells = []
        for j, cell in enumerate(variant["cells"]):
            if not isinstance(cell, dict) or not isinstance(cell.get("seed"), int) \
                    or not isinstance(cell.get("report"), str):
                raise InputError(f"{path}: {where}.cells[{j}]: expected an object with a \"seed\" and a "
                                 "\"report\" path")
            report_path = os.path.join(os.path.dirname(path), cell["report"])
            run = None
            if cell.get("status") != "not_run" and os.path.exists(report_path):
                data = load_json(report_path)
                check_schema(report_path, data)
                run = Run(report_path, data, f"{name} seed {cell['seed']}")
                run.group, run.seed = name, cell["seed"]
            cells.append(Cell(name, cell, run))
        statistics = variant.get("statistics", {})
        if not isinstance(statistics, dict):
            raise InputError(f"{path}: {where}.statistics: expected an object")
        for metric, entry in statistics.items():
            if not isinstance(entry, dict) or any(_number(entry.get(k)) is None for k in ("n", "mean")) \
                    or not (entry.get("sd") is None and entry.get("n") == 1 or _number(entry.get("sd")) is not None) \
                    or not isinstance(entry.get("values", []), list) \
                    or any(_number(v) is None for v in entry.get("values", [])):
                raise InputError(f"{path}: {where}.statistics.{metric}: expected n, mean, sd and values (numbers; "
                                 "sd null only for n 1)")
        vs_baseline = variant.get("vs_baseline")
        if vs_baseline is not None:
            vs_baseline = _comparison(path, f"{where}.vs_baseline", vs_baseline)
        set_ = variant.get("set") if isinstance(variant.get("set"), dict) else {}
        recipe = variant.get("recipe")
        if recipe is not None and not isinstance(recipe, str):
            raise InputError(f"{path}: {where}.recipe: expected the name of one of the spec's \"recipes\"")
        return Variant(name, set_, cells, statistics, vs_baseline, recipe)


class Attention:
    """Attention weights of one sentence pair: blocks (encoder self, decoder self, decoder
    cross), each with layers x heads matrices [queries][keys]."""

    BLOCKS = ("encoder_self", "decoder_self", "decoder_cross")

    def __init__(self, path, data):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.source = data.get("source_tokens")
        self.target = data.get("target_tokens")
        self.blocks = {}
        for block in self.BLOCKS:
            layers = get(data, "attention", block)
            if layers is None:
                continue
            queries, keys = self._axes(block)
            if not isinstance(layers, list) or not all(isinstance(h, list) for h in layers):
                raise InputError(f"{path}: attention.{block}: expected [layers][heads][queries][keys]")
            for li, heads in enumerate(layers):
                for hi, matrix in enumerate(heads):
                    shape = (len(matrix), len(matrix[0]) if matrix else 0)
                    if shape != (len(queries), len(keys)):
                        raise InputError(f"{path}: attention.{block}[{li}][{hi}]: shape {shape}, expected "
                                         f"({len(queries)}, {len(keys)}) for the tokens given")
            self.blocks[block] = layers
        if not isinstance(self.source, list) or not isinstance(self.target, list) or not self.blocks:
            raise InputError(f"{path}: an attention file needs source_tokens, target_tokens and attention.<block>")

    def _axes(self, block):
        """(query tokens, key tokens) of a block."""
        if block == "encoder_self":
            return self.source, self.source
        if block == "decoder_self":
            return self.target, self.target
        return self.target, self.source


def load_inputs(paths):
    """Run reports, ablation summaries, attention files and mutation scores from files, or from
    folders searched for *.json of those kinds. Returns (runs, ablations, attentions, mutation
    scores); a mutation score is its JSON object (conformance/mutation-score)."""
    files = []  # (path, given explicitly)
    for path in paths:
        if os.path.isdir(path):
            for root, _, names in sorted(os.walk(path)):
                files += [(os.path.join(root, n), False) for n in sorted(names) if n.endswith(".json")]
        else:
            files.append((path, True))
    runs, ablations, attentions, mutation_scores = [], [], [], []
    for path, explicit in files:
        data = load_json(path)
        kind = get(data, "kind")
        if kind == "train":
            runs.append(Run(path, data))
        elif kind == "ablation":
            ablations.append(Ablation(path, data))
        if kind in ("train", "ablation"):
            check_schema(path, data)  # after the readers' own checks, which say more
        elif kind == "attention":
            attentions.append(Attention(path, data))
        elif kind == "mutation_score":
            if not isinstance(data.get("mutants"), list):
                raise InputError(f"{path}: a mutation score needs a \"mutants\" list")
            mutation_scores.append(data)
        elif explicit:
            raise InputError(f"{path}: unknown kind {kind!r} (expected \"train\", \"ablation\", \"attention\" "
                             "or \"mutation_score\")")
        # A folder also holds configs, the schema and other JSON: not ours to render.
    # The reports under an ablation's folder are its cells: rendered with the ablation as its
    # summary counts them, never as runs of their own (a cell still training, which the summary
    # lists as not run, would otherwise show as a finished-looking run).
    folders = [os.path.join(os.path.dirname(os.path.abspath(a.path)), "") for a in ablations]
    runs = [r for r in runs if not os.path.abspath(r.path).startswith(tuple(folders))]
    return runs, ablations, attentions, mutation_scores
