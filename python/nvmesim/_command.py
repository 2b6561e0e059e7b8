"""Runs the nvmesim command and turns its output and exit status into Python."""

import csv
import json
import os
import shutil
import signal
import subprocess
import tempfile

# The command's exit status 2 is a usage or configuration error (its message
# is one line on standard error); 128 + N is "interrupted by signal N".
_USAGE_ERROR = 2


class Error(RuntimeError):
    """nvmesim failed for a reason other than its configuration.

    `returncode` is the command's exit status, `message` its error line and
    `result` the document it printed, if any (a stalled or failed run still
    reports what it measured)."""

    def __init__(self, message, returncode, result=None):
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.result = result


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or SIGTERM reached a run: the command stopped it and
    reported what it had measured, marked interrupted; that document is
    `result` (None when the command had printed nothing)."""

    def __init__(self, result=None):
        super().__init__("nvmesim run interrupted")
        self.result = result


def binary():
    """The nvmesim command this module runs (see the module's docstring)."""
    env = os.environ.get("NVMESIM_BINARY")
    if env:
        return env
    found = shutil.which("nvmesim")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, os.pardir, os.pardir, "build", "nvmesim")
    if os.access(built, os.X_OK):
        return os.path.normpath(built)
    raise FileNotFoundError(
        "nvmesim: command not found: set NVMESIM_BINARY, put nvmesim on PATH, "
        "or build it (cmake --build build)")


def _option(name, value):
    if isinstance(value, bool):
        value = "on" if value else "off"
    return "--%s=%s" % (name, value)


def _error_line(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    for line in lines:  # the command's own one-line error
        if line.startswith("nvmesim: error:") or line.startswith("nvmesim sweep: error:"):
            return line
    return lines[-1] if lines else "nvmesim: no message"


def _call(args, capture=True):
    """Runs nvmesim with `args`; returns (returncode, stdout, stderr).

    Ctrl-C while it runs: the command hears SIGINT (from the terminal, being
    in our process group, or from us), stops, prints what it measured and
    exits 130; we then raise Interrupted with that document."""
    proc = subprocess.Popen([binary()] + list(args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate()
    except KeyboardInterrupt:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate()
        raise Interrupted(_parse(out)) from None
    if proc.returncode in (128 + signal.SIGINT, 128 + signal.SIGTERM):
        raise Interrupted(_parse(out))
    return proc.returncode, out, err


def _parse(text):
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        return None


def _check(returncode, out, err):
    if returncode == _USAGE_ERROR:
        raise ValueError(_error_line(err))
    if returncode != 0:
        raise Error(_error_line(err), returncode, _parse(out))


def run(*, single=True, **parameters):
    """One run; returns the command's --output-format=json document as dicts.

    Keyword arguments are nvmesim's options and parameters by their names in
    --list-params (dotted ones as **{"nvme.dbbuf": "spec"}), plus `preset`,
    `device`, `config` and `job`. single=True runs the one configuration
    (--single-run); single=False runs the default comparison (buffer off vs
    on) and returns its document. A configuration error raises ValueError
    with the command's one-line message; a run that ends otherwise than ok
    (stalled, I/O errors...) raises Error carrying the document."""
    args = ["--output-format=json"]
    if single:
        args.append("--single-run")
    for name, value in parameters.items():
        args.append(_option(name, value))
    returncode, out, err = _call(args)
    _check(returncode, out, err)
    return json.loads(out)


def _table(text):
    """Rows of a fixed-width table whose first line names the columns."""
    lines = text.splitlines()
    header = lines[0]
    names = header.split()
    starts = [header.index(n) for n in names]
    rows = []
    for line in lines[1:]:
        if not line.strip():
            continue
        cells = []
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else None
            cells.append(line[start:end].strip())
        rows.append(dict(zip((n.lower() for n in names), cells)))
    return rows


def params():
    """Every parameter, as --list-params lists it: a list of dicts with
    name, default, unit, range (a range lo..hi, or choices a|b|c) and help."""
    returncode, out, err = _call(["--list-params"])
    _check(returncode, out, err)
    rows = _table(out)
    for row in rows:
        row["range"] = row.pop("range/choices")
    return rows


def presets():
    """The presets, as --list-presets lists them: name -> {description,
    source, sets: {parameter: value}}."""
    returncode, out, err = _call(["--list-presets"])
    _check(returncode, out, err)
    result = {}
    current = None
    for line in out.splitlines():
        if line.startswith("("):  # the list's closing note
            current = None
        elif line and not line.startswith(" "):
            name, _, description = line.partition(": ")
            current = result.setdefault(name, {"description": description, "source": "", "sets": {}})
        elif current is not None and line.strip().startswith("source: "):
            current["source"] = line.strip()[len("source: "):]
        elif current is not None and line.strip().startswith("sets: "):
            for item in line.strip()[len("sets: "):].split():
                key, _, value = item.partition("=")
                current["sets"][key] = value
    return result


def _number(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def sweep(grid, fixed=None, jobs=None, out=None, seed=None):
    """Runs every point of `grid` (parameter -> list of values, or a
    "START:STOP:STEP" string) with the `fixed` options, as `nvmesim sweep`
    does (each point its own process, `jobs` at once). Returns results.csv's
    rows: a pandas DataFrame when pandas is installed, else a list of dicts
    (numbers as int or float, empty cells as None). `out` keeps the sweep's
    directory (results.csv, results.jsonl, points/); by default a temporary
    one is used and removed."""
    args = ["sweep"]
    for name, values in grid.items():
        if isinstance(values, str):
            text = values
        else:
            text = ",".join(str(v) for v in values)
        args.append("--grid=%s=%s" % (name, text))
    directory = out or tempfile.mkdtemp(prefix="nvmesim-sweep-")
    args.append("--out=%s" % directory)
    if jobs is not None:
        args.append("--jobs=%d" % jobs)
    if seed is not None:
        args.append("--seed=%d" % seed)
    for name, value in (fixed or {}).items():
        args.append(_option(name, value))
    try:
        returncode, stdout, err = _call(args)
        _check(returncode, stdout, err)
        path = os.path.join(directory, "results.csv")
        try:
            import pandas
        except ImportError:
            with open(path, newline="") as f:
                return [{k: (_number(v) if v != "" else None) for k, v in row.items()}
                        for row in csv.DictReader(f)]
        return pandas.read_csv(path)
    finally:
        if out is None:
            shutil.rmtree(directory, ignore_errors=True)
