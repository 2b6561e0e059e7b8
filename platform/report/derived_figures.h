// The figures nvmesim derives from a run's statistics tree (docs/metrics.md,
// "Derived figures"): I/O counts, IOPS and bandwidth, doorbell updates and
// EventIdx hit rates, VM exits, per-I/O figures, the controller's counts,
// utilisations, the job sections' figures. Each is defined here once, as a
// row of one table: its key (its place in the JSON), its format and its
// formula over the tree (RunResults::stats) and the run's times.
//
// Everything that shows a figure reads it from this table: the JSON writer
// walks it (a figure added here under one of the JSON's sections appears in
// --output-format=json and hence in the sweep CSV's columns with no other
// change; docs/metrics.md lists it, tests/platform/test_derived_figures.cpp
// checks that), and the text report, json+, the default comparison,
// `validate` and the scenarios ask for it by key (RunResults::figure,
// RunSummary::figure). RunResults itself holds no copy of a counter.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nvmesim/platform/report/json_out.h"

namespace nvmesim::platform {

struct RunResults;

namespace figures {

// How a figure is written. Count: an integer; Fixed: printf("%.<decimals>f"),
// null when undefined (NaN); Rate: report::rate (iops, bw_bytes); Flag:
// true or false.
enum class Format { Count, Fixed, Rate, Flag };

// What one value is of: the run, or one element of an array (one vCPU, one
// device thread, one job file section), written as that array's objects.
enum class Over { Run, Vcpu, DeviceThread, JobSection };

struct Figure {
  std::string key;  // dotted JSON path; an array's figure: the array's path, then its own name
  Format format = Format::Count;
  int decimals = 0;  // Format::Fixed
  Over over = Over::Run;
  bool in_json = true;     // false: not written in the JSON (the text report, json+ or tests read it)
  std::string definition;  // docs/metrics.md's "Derived figures" table
  // The value; `instance` indexes the array (Over::Vcpu, ...). NaN: undefined.
  std::function<double(const RunResults&, unsigned instance)> value;
};

// The table, in JSON order, each key once.
const std::vector<Figure>& all();
// The figure of `key`; throws std::out_of_range naming it when there is none.
const Figure& find(const std::string& key);

// How many elements an array figure has in this run (1 for Over::Run).
unsigned instances(const RunResults& r, Over over);
// The name of a device thread (its statistics group) and of a job section.
std::string device_thread(const RunResults& r, unsigned index);

// A value as the JSON writes it.
report::Json json_value(const Figure& f, double value);
// Every JSON figure under the top-level key `section` (or `section` itself)
// into `doc`, at its key, in table order; an array figure's array whole, each
// element's object starting with what it is of ("vcpu": 3, "thread":
// "iothread0", "name": "job1").
void put_json(report::Json& doc, const RunResults& r, const std::string& section);

// "per I/O": n / ios, 0 without I/Os (every per_io figure; the text's
// activation figures).
double per_io(const RunResults& r, double n);

// docs/metrics.md's rows: "| `key` | definition |", exit kinds written <kind>.
std::string docs_table();

}  // namespace figures
}  // namespace nvmesim::platform
