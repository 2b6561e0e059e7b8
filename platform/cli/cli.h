// The command-line front end: argv -> Config + RunOptions.
//
//   nvmesim [options]          one experiment (or the default one)
//   nvmesim COMMAND ...        a subcommand (platform/cli/commands.h)
//
// Options: the generic ones (--help/-h, --version, --list-params,
// --config FILE, --output-format normal|json|json+, --output FILE, --host-stats,
// --job FILE, --strict, --single-run; traces: --vcd FILE, --timeline FILE,
// --trace-start TIME, --trace-stop TIME, --trace-signals LIST, see
// traces/README.md; a trace makes one run) and one long option per registered parameter,
// `--name=value` or `--name value`. Config files are applied first, in the
// order given, then a --job file (platform/fio/fio_job.h), then
// the parameter options (so the command line overrides the files); a
// repeated option: the last one wins. Options are never abbreviated.
#pragma once

#include "nvmesim/platform/report/build_info.h"

#include <string>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/system/run.h"

namespace nvmesim::platform {

struct CliResult {
  enum Action {
    Run,         // run_experiment(config, options, ...)
    Help,        // print `message` (the help text) to stdout, exit 0
    ListParams,  // print `message` (the parameter table) to stdout, exit 0
    Version,     // print `message` ("nvmesim X.Y.Z") to stdout, exit 0
    Error        // `message` is one line (no "nvmesim: error: " prefix), exit_code 2
  };
  Action action = Error;
  Config config;       // Run: validated (validate_all), defaults where not given
  RunOptions options;  // Run: default_experiment when nvme.dbbuf is not set, the device is NVMe and no --single-run
  std::string message;
  int exit_code = 0;   // 0, or 2 for Error
};

CliResult parse_command_line(int argc, const char* const* argv);

// The texts behind --help, --list-params and --version.
std::string help_text();
std::string list_params_text(const ParamRegistry& registry = ParamRegistry::builtin());
// "nvmesim VERSION (commit C)": C is build_commit() (platform/report/build_info.h).
std::string version_text();

}  // namespace nvmesim::platform
