"""What reports/render.py reads: run reports (report.json of `trepro train`, with the test
results `trepro evaluate` adds), ablation summaries, and attention files (`trepro attention`).

Every field is read through the accessors here, so that a report missing a part (a run still
going, one never evaluated) renders with blanks instead of failing, while a file that is not a
report at all is an error naming it.
"""
import json
import os


class InputError(Exception):
    """A file that cannot be rendered: the message names it and says what was expected."""


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from e


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
        self.path = path
        self.data = data
        self.name = name or os.path.basename(os.path.dirname(os.path.abspath(path))) or path

    def model(self, key, default=None):
        return get(self.data, "config", "model", key, default=default)

    def train(self, *keys, default=None):
        return get(self.data, "config", "train", *keys, default=default)

    def steps(self):
        return [s for s in self.data.get("steps") or [] if isinstance(s, dict) and "step" in s]

    def validation(self):
        return [v for v in self.data.get("validation") or [] if isinstance(v, dict) and "step" in v]

    def direction(self):
        src = get(self.data, "data", "source_language")
        tgt = get(self.data, "data", "target_language")
        dataset = get(self.data, "data", "dataset", default="?")
        return f"{dataset} {src}-{tgt}" if src and tgt else dataset

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


def _number(value):
    """A JSON number as float; None for anything else (missing, null, a string)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class Ablation:
    """A summary of `trepro ablate` (reports/ablation_schema.json): its name and description, the
    runs of its variants (reports relative to the summary) and the variants not run yet."""

    def __init__(self, path, data):
        variants = data.get("variants")
        if not isinstance(variants, list) or not variants:
            raise InputError(f"{path}: an ablation summary needs a non-empty \"variants\" list")
        self.path = path
        self.name = data.get("name") or os.path.splitext(os.path.basename(path))[0]
        self.description = data.get("description", "")
        self.runs, self.not_run = [], []
        for i, variant in enumerate(variants):
            if not isinstance(variant, dict) or not isinstance(variant.get("name"), str) \
                    or not isinstance(variant.get("report"), str):
                raise InputError(f"{path}: variants[{i}]: expected an object with a \"name\" and a \"report\" path")
            report_path = os.path.join(os.path.dirname(path), variant["report"])
            if variant.get("status") == "not_run" or not os.path.exists(report_path):
                self.not_run.append(variant["name"])
            else:
                self.runs.append(Run(report_path, load_json(report_path), variant["name"]))


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
    return runs, ablations, attentions, mutation_scores
