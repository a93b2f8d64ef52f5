"""Reading a report file: the one error type of reports/ (a file that cannot be rendered or
validated, named with what was expected) and a JSON reader that refuses what JSON has not.
The leaf of reports/ imports: render_data.py and validate_report.py both build on it."""
import json


class InputError(Exception):
    """A file that cannot be rendered (or validated, reports/validate_report.py): the message names
    it and says what was expected."""


def _reject_constant(path, literal):
    """Python's json reads NaN, Infinity and -Infinity, which JSON has not: a NaN BLEU would pass
    the schema (NaN fails no bound) and render as "nan"."""
    raise InputError(f"{path}: not JSON: {literal} is not a JSON value (expected a number or null)")


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f, parse_constant=lambda literal: _reject_constant(path, literal))
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from e
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text: byte {e.start}") from e
    except RecursionError as e:
        raise InputError(f"{path}: JSON nested too deeply to read") from e
