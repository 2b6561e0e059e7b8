// nvmesim: the command-line entry point.
//
//   nvmesim COMMAND ...    -> the command's handler (platform/cli/commands.h:
//                             eventidx, sweep, scenario, validate)
//   nvmesim [options]      -> parse_command_line (platform/cli/cli.h), then
//                             help / list / version, or run_experiment.
// Exit status (platform/cli/exit_codes.h): 0 success, 1 internal error, 2 usage
// or configuration error, 3 stalled with --fail-on-stall, 4 I/Os failed, 5
// results not written (standard output included), 128 + signal when
// SIGINT/SIGTERM cut the run short (130, 143; the results so far are
// written, marked interrupted).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "nvmesim/platform/cli/cli.h"
#include "nvmesim/platform/cli/commands.h"
#include "nvmesim/platform/cli/exit_codes.h"
#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/system/run.h"

namespace {

// 128 + the signal when SIGINT/SIGTERM arrived, else 0.
int interrupted() {
  return nvmesim::platform::interrupt::received() ? nvmesim::platform::interrupt::exit_code() : 0;
}

}  // namespace

// libsystemc references sc_main (extern "C"); nvmesim has its own main.
extern "C" int sc_main(int, char**) { return 0; }

namespace {

int run_main(int argc, char** argv) {
  using nvmesim::platform::CliResult;
  try {
    if (argc > 1)
      if (const auto* command = nvmesim::platform::cli::find_command(argv[1])) {
        const int code = command->run(argc - 1, argv + 1, std::cout, std::cerr);
        // A signal while the input was read ends the read with an error:
        // the exit status says it was the signal.
        return code == 2 && interrupted() ? interrupted() : code;
      }

    CliResult cli = nvmesim::platform::parse_command_line(argc, argv);
    switch (cli.action) {
      case CliResult::Help:
      case CliResult::ListParams:
      case CliResult::Version:
        std::cout << cli.message;
        if (!cli.message.empty() && cli.message.back() != '\n') std::cout << '\n';
        return 0;
      case CliResult::Error:
        std::cerr << "nvmesim: error: " << cli.message << "\n";
        if (const int code = interrupted()) return code;
        return cli.exit_code ? cli.exit_code : 2;
      case CliResult::Run:
        break;
    }

    return nvmesim::platform::run_experiment(cli.config, cli.options, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "nvmesim: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  // results on stdout stay clean
  nvmesim::platform::interrupt::install();  // SIGINT/SIGTERM: stop and report (platform/cli/interrupt.h)
  const int code = run_main(argc, argv);
  // Results that did not reach standard output (a full disk, a closed pipe,
  // /dev/full) are not a success.
  std::cout.flush();
  const bool lost = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (lost) {
    const int e = errno;
    std::cerr << "nvmesim: error: standard output: write error (" << (e ? std::strerror(e) : "unknown error") << ")\n";
    return code == 0 ? nvmesim::platform::exit_code::kOutput : code;
  }
  return code;
}
