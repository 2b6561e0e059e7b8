#!/usr/bin/env python3
"""Checks a Chrome trace-event JSON file (nvmesim --timeline) against the rules
of Perfetto's JSON importer, which is stricter than chrome://tracing.

The rules, and where Perfetto states them (google/perfetto,
src/trace_processor/importers/json/):
  json_trace_tokenizer.cc
    - the file starts with '{' or '['; in an object, the top-level keys it
      knows are traceEvents, systemTraceEvents, metadata, displayTimeUnit and
      otherData: at any other key it stops reading the file (events after it
      are lost);
    - displayTimeUnit is "ns" or "ms" (else "displayTimeUnit unknown") and is
      read only from the file's first chunk (stat json_display_time_unit_too_late);
    - otherData is an object;
    - strings: no control characters, no \\uXXXX escapes ("Illegal character
      in JSON");
    - an event member whose value is an array is refused ("unsupported JSON
      dictionary with array");
    - an event without ts is dropped unless it is metadata (ph M).
  json_trace_parser_impl.cc
    - ph a string; pid and tid numbers (strings are a non-standard hack);
    - X needs dur, else the event is dropped;
    - b/e/n need pid and an id (or id2), else json_parser_failure;
    - i/I: s, when given, is g, p or t;
    - M: thread_name/process_name take args.name (a string).
  slice tracking (slice_tracker.cc): slices of one thread nest; an E closes
    the last open B of its thread; a b's e has its cat, id and name.
Also checked, as nvmesim promises it (traces/README.md): timestamps never
decrease in file order, and nothing follows the top-level value.

Usage: check_perfetto_json.py FILE.json...   (exit 0: no problem; else each
problem on a line, exit 1)
       check_perfetto_json.py --each-bad FILE.json...   (exit 0 when every
file has a problem: the check's own test)
"""
import json
import sys
from decimal import Decimal

KNOWN_TOP = {"traceEvents", "systemTraceEvents", "metadata", "displayTimeUnit", "otherData"}
PHASES = set("BEXiIbenMCsftPOND") | {"R"}
METADATA = {"process_name", "thread_name", "process_sort_index", "thread_sort_index", "process_labels"}


def ps(v):
    """Microseconds (an exact Decimal) as integer picoseconds."""
    return int(Decimal(v) * 1000000)


def check(text):
    problems = []

    def bad(where, what):
        problems.append(f"{where}: {what}")

    if "\\u" in text:
        bad("file", "a \\u escape (Perfetto's tokenizer refuses them)")
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "{[":
        bad("file", "does not start with { or [")
        return problems

    def no_constants(name):
        raise ValueError(f"{name} is not JSON")

    try:
        # strict=True (the default) refuses control characters in strings;
        # json.loads refuses anything after the top-level value.
        doc = json.loads(text, parse_float=Decimal, parse_constant=no_constants)
    except ValueError as e:
        bad("file", f"not strict JSON: {e}")
        return problems

    if isinstance(doc, dict):
        keys = list(doc.keys())
        for k in keys:
            if k not in KNOWN_TOP:
                bad("top level", f"unknown key {k!r}: Perfetto stops reading the file there")
        if "displayTimeUnit" in doc:
            if doc["displayTimeUnit"] not in ("ns", "ms"):
                bad("displayTimeUnit", f"{doc['displayTimeUnit']!r} is not \"ns\" or \"ms\"")
            if keys[0] != "displayTimeUnit":
                bad("displayTimeUnit", "not the first key (Perfetto reads it from the first chunk only)")
        if "otherData" in doc and not isinstance(doc["otherData"], dict):
            bad("otherData", "not an object")
        events = doc.get("traceEvents")
        if not isinstance(events, list):
            bad("traceEvents", "missing or not an array")
            return problems
    elif isinstance(doc, list):
        events = doc
    else:
        bad("file", "neither an object nor an array")
        return problems

    last_ts = None
    open_b = {}       # (pid, tid) -> stack of (name, ts)
    open_async = {}   # (pid, cat, id) -> (name, ts)
    slices = {}       # (pid, tid) -> [(start_ps, end_ps, index)]
    for i, e in enumerate(events):
        where = f"traceEvents[{i}]"
        if not isinstance(e, dict):
            bad(where, "not an object")
            continue
        for k, v in e.items():
            if isinstance(v, list):
                bad(where, f"member {k!r} is an array (Perfetto's tokenizer refuses it)")
        ph = e.get("ph")
        if not isinstance(ph, str) or len(ph) != 1 or ph not in PHASES:
            bad(where, f"ph {ph!r} is not a one-letter phase")
            continue
        if "name" in e and not isinstance(e["name"], str):
            bad(where, "name is not a string")
        if "cat" in e and not isinstance(e["cat"], str):
            bad(where, "cat is not a string")
        if "args" in e and not isinstance(e["args"], dict):
            bad(where, "args is not an object")
        for k in ("pid", "tid"):
            v = e.get(k)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 2**32:
                bad(where, f"{k} {v!r} is not an integer in [0, 2^32)")
        if ph == "M":
            if e.get("name") not in METADATA:
                bad(where, f"metadata name {e.get('name')!r} is not one Perfetto reads")
            args = e.get("args")
            if not isinstance(args, dict):
                bad(where, "metadata without an args object")
            elif e.get("name", "").endswith("_name") and not isinstance(args.get("name"), str):
                bad(where, "args.name is not a string")
            elif e.get("name", "").endswith("_sort_index") and not isinstance(args.get("sort_index"), int):
                bad(where, "args.sort_index is not an integer")
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, Decimal)) or isinstance(ts, bool):
            bad(where, f"ts {ts!r} is not a number (Perfetto drops the event)")
            continue
        t = ps(ts)
        if last_ts is not None and t < last_ts:
            bad(where, f"ts {ts} before the previous event's")
        last_ts = t
        thread = (e.get("pid"), e.get("tid"))
        if ph == "X":
            dur = e.get("dur")
            if not isinstance(dur, (int, Decimal)) or isinstance(dur, bool) or dur < 0:
                bad(where, f"X without a non-negative number dur ({dur!r}): Perfetto drops it")
            else:
                slices.setdefault(thread, []).append((t, t + ps(dur), i))
        elif ph == "B":
            open_b.setdefault(thread, []).append((e.get("name"), t, i))
        elif ph == "E":
            stack = open_b.get(thread)
            if not stack:
                bad(where, "E without an open B on its thread")
            else:
                name, start, j = stack.pop()
                slices.setdefault(thread, []).append((start, t, j))
        elif ph in "ben":
            if "id" not in e and "id2" not in e:
                bad(where, f"{ph} without an id")
                continue
            if not isinstance(e.get("id"), (str, int)):
                bad(where, "id is neither a string nor an integer")
                continue
            key = (e.get("pid"), e.get("cat"), str(e.get("id")))
            if ph == "b":
                if key in open_async:
                    bad(where, f"b of id {e['id']} while one is open")
                open_async[key] = (e.get("name"), t)
            elif ph == "e":
                if key not in open_async:
                    bad(where, f"e of id {e['id']} without its b")
                else:
                    name, start = open_async.pop(key)
                    if name != e.get("name"):
                        bad(where, f"e named {e.get('name')!r}, its b {name!r}")
        elif ph in "iI":
            if "s" in e and e["s"] not in ("g", "p", "t"):
                bad(where, f"instant scope {e['s']!r} is not g, p or t")
    for thread, stack in open_b.items():
        for name, _, j in stack:
            bad(f"traceEvents[{j}]", f"B {name!r} never ended")
    for key, (name, _) in open_async.items():
        bad("end of trace", f"async {name!r} id {key[2]} never ended")
    # Slices of one thread nest: none starts inside another and ends after it.
    for thread, spans in slices.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        ends = []
        for start, end, j in spans:
            while ends and ends[-1][0] <= start:
                ends.pop()
            if ends and end > ends[-1][0]:
                bad(f"traceEvents[{j}]", f"slice on tid {thread[1]} overlaps traceEvents[{ends[-1][1]}] without nesting")
            ends.append((end, j))
    return problems


def main():
    args = sys.argv[1:]
    each_bad = bool(args) and args[0] == "--each-bad"
    files = args[1:] if each_bad else args
    if not files:
        print("usage: check_perfetto_json.py [--each-bad] FILE.json...", file=sys.stderr)
        return 2
    failed = False
    for name in files:
        with open(name, encoding="utf-8") as f:
            problems = check(f.read())
        if each_bad:
            if not problems:
                print(f"{name}: no problem found")
                failed = True
            continue
        for p in problems[:50]:
            print(f"{name}: {p}")
        if len(problems) > 50:
            print(f"{name}: ... and {len(problems) - 50} more")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
