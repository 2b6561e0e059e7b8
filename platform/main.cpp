// nvmesim: the command-line entry point.
//
//   nvmesim eventidx ...   -> run_eventidx_command (platform/eventidx_cli.h)
//   nvmesim sweep ...      -> run_sweep_command (platform/sweep_cli.h)
//   nvmesim validate ...   -> run_validate_command (platform/validate/validate.h)
//   nvmesim [options]      -> parse_command_line (platform/cli.h), then
//                             help / list / version, or run_experiment.
// Exit status: 0 success, 1 internal error, 2 usage or configuration error,
// 3 stalled with --fail-on-stall, 128 + signal when SIGINT/SIGTERM cut the
// run short (130, 143; the results so far are written, marked interrupted).
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "platform/cli.h"
#include "platform/eventidx_cli.h"
#include "platform/interrupt.h"
#include "platform/scenarios.h"
#include "platform/run.h"
#include "platform/sweep_cli.h"
#include "platform/validate/validate.h"

// libsystemc references sc_main (extern "C"); nvmesim has its own main.
extern "C" int sc_main(int, char**) { return 0; }

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  // results on stdout stay clean
  using nvmesim::platform::CliResult;
  nvmesim::platform::interrupt::install();  // SIGINT/SIGTERM: stop and report (platform/interrupt.h)
  try {
    if (argc > 1 && std::string(argv[1]) == "eventidx")
      return nvmesim::platform::run_eventidx_command(argc - 1, argv + 1, std::cout, std::cerr);
    if (argc > 1 && std::string(argv[1]) == "scenario")
      return nvmesim::platform::run_scenario_command(argc - 1, argv + 1, std::cout, std::cerr);
    if (argc > 1 && std::string(argv[1]) == "validate")
      return nvmesim::platform::run_validate_command(argc - 1, argv + 1, std::cout, std::cerr);
    if (argc > 1 && std::string(argv[1]) == "sweep")
      return nvmesim::platform::run_sweep_command(argc - 1, argv + 1, std::cout, std::cerr);

    CliResult cli = nvmesim::platform::parse_command_line(argc, argv);
    switch (cli.action) {
      case CliResult::Help:
      case CliResult::ListParams:
      case CliResult::Version:
        std::cout << cli.message;
        if (!cli.message.empty() && cli.message.back() != '\n') std::cout << '\n';
        return 0;
      case CliResult::Subcommand:  // only "eventidx", handled above
      case CliResult::Error:
        std::cerr << "nvmesim: error: " << cli.message << "\n";
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
