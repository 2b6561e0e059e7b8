"""The Python module against the command it wraps (run by ctest through pytest)."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import nvmesim

SMALL = {"number_ios": 2000, "iodepth": 8}


def cli_json(*args):
    out = subprocess.run([nvmesim.binary(), "--output-format=json"] + list(args),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_run_equals_the_commands_json_document():
    doc = nvmesim.run(**SMALL, **{"nvme.dbbuf": "spec"})
    assert doc == cli_json("--single-run", "--number_ios=2000", "--iodepth=8", "--nvme.dbbuf=spec")
    assert doc["outcome"] == "ok" and doc["ios"] == 2000
    # The metric invariant holds on what Python sees: updates = MMIO + suppressed.
    sq = doc["doorbells"]["sq"]
    assert sq["updates"] == sq["mmio"] + sq["suppressed"]


def test_repeated_runs_in_one_interpreter_and_seeds():
    a = nvmesim.run(**SMALL, seed=1)
    b = nvmesim.run(**SMALL, seed=1)
    assert a == b
    off = nvmesim.run(**SMALL, **{"nvme.dbbuf": "off"})
    spec = nvmesim.run(**SMALL, **{"nvme.dbbuf": "spec"})
    assert off["config"]["nvme.dbbuf"] == "off" and spec["config"]["nvme.dbbuf"] == "spec"
    assert spec["per_io"]["exits"] < off["per_io"]["exits"]


def test_the_default_comparison():
    doc = nvmesim.run(single=False, **SMALL)
    assert doc == cli_json("--number_ios=2000", "--iodepth=8")
    assert len(doc["runs"]) == 2


def test_configuration_errors_are_value_errors_with_the_commands_line():
    with pytest.raises(ValueError) as e:
        nvmesim.run(iodepth=0)
    assert str(e.value) == "nvmesim: error: --iodepth: 0 is out of range (1..4095)"
    with pytest.raises(ValueError) as e:
        nvmesim.run(**{"nvme.dbbuf": "maybe"})
    assert "nvme.dbbuf" in str(e.value) and "spec" in str(e.value)
    with pytest.raises(ValueError) as e:
        nvmesim.run(no_such_option=1)
    assert "no_such_option" in str(e.value)


def test_params_lists_every_parameter_as_the_command_does():
    rows = nvmesim.params()
    listed = subprocess.run([nvmesim.binary(), "--list-params"], capture_output=True,
                            text=True, check=True).stdout.splitlines()
    assert len(rows) == len([l for l in listed[1:] if l.strip()])
    by_name = {r["name"]: r for r in rows}
    assert by_name["iodepth"]["default"] == "32"
    assert by_name["iodepth"]["range"] == "1..4095"
    assert by_name["iodepth"]["unit"] == "I/Os"
    assert by_name["nvme.dbbuf"]["range"] == "off|spec|vendor"
    assert by_name["rw"]["help"] == "I/O pattern, as fio's rw"


def test_presets_and_their_settings():
    p = nvmesim.presets()
    assert {"haswell-ep", "qemu-7.1", "qemu-7.2", "kvm", "tcg"} <= set(p)
    assert p["haswell-ep"]["sets"]["hv.exit_mmio"] == "5100cyc"
    assert "Bonzini" in p["haswell-ep"]["source"]
    assert all(not name.startswith("(") for name in p)


def test_sweep_returns_the_csvs_rows():
    grid = {"iodepth": [1, 4], "nvme.dbbuf": ["off", "spec"]}
    rows = nvmesim.sweep(grid, {"number_ios": 500}, jobs=2)
    records = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    assert [(r["iodepth"], r["nvme.dbbuf"]) for r in records] == [
        (1, "off"), (1, "spec"), (4, "off"), (4, "spec")]
    assert all(r["status"] == "ok" for r in records)
    # Each point equals a run of its own with the point's seed.
    for r in records:
        one = nvmesim.run(iodepth=r["iodepth"], number_ios=500, seed=r["seed"],
                          **{"nvme.dbbuf": r["nvme.dbbuf"]})
        assert one["ios"] == r["ios"]
        assert one["per_io"]["exits"] == pytest.approx(r["per_io.exits"])


def test_sweep_without_pandas_gives_a_list_of_dicts(tmp_path):
    script = (
        "import sys; sys.modules['pandas'] = None\n"
        "import nvmesim, json\n"
        "rows = nvmesim.sweep({'iodepth': '1:2:1'}, {'number_ios': 200}, jobs=1)\n"
        "print(json.dumps([[r['iodepth'], r['status'], r['ios']] for r in rows]))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env=dict(os.environ)).stdout
    assert json.loads(out) == [[1, "ok", 200], [2, "ok", 200]]


def test_a_bad_sweep_raises_value_error():
    with pytest.raises(ValueError) as e:
        nvmesim.sweep({"iodepth": [1, 0]}, {"number_ios": 100})
    assert "iodepth" in str(e.value)


def test_ctrl_c_interrupts_the_run_and_keeps_its_document():
    script = (
        "import nvmesim, json\n"
        "try:\n"
        "    nvmesim.run(iodepth=1, number_ios=400000000)\n"
        "except nvmesim.Interrupted as e:\n"
        "    print(json.dumps({'outcome': e.result['outcome'], 'ios': e.result['ios']}))\n"
        "    raise SystemExit(130)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ))
    # Signal once the run's child has started and is simulating.
    deadline = time.time() + 30
    child = None
    while time.time() < deadline and child is None:
        try:
            kids = open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)).read().split()
        except OSError:
            kids = []
        if kids:
            child = int(kids[0])
            with open("/proc/%d/status" % child) as f:  # it handles SIGINT once it has exec'd
                caught = [l for l in f if l.startswith("SigCgt:")]
            if not caught or int(caught[0].split()[1], 16) & (1 << (signal.SIGINT - 1)) == 0:
                child = None
        time.sleep(0.05)
    assert child is not None
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)  # as Ctrl-C would, though only to Python here
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130
    doc = json.loads(out)
    assert doc["outcome"] == "interrupted"
    assert doc["ios"] > 0
