// nvmesim's subcommands, in one table: main() dispatches with it and the
// top-level --help lists it, so a command cannot exist without its line in
// the help (nor the other way round).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace nvmesim::platform::cli {

// argv[0] is the subcommand's name. Returns the exit status.
using CommandHandler = int (*)(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

struct Command {
  const char* name;     // "sweep"
  const char* summary;  // one line for the top-level help
  CommandHandler run;
};

const std::vector<Command>& commands();
// nullptr when `name` is not a subcommand.
const Command* find_command(const char* name);

// The help's usage lines: "  nvmesim sweep ...        summary" plus
// "(see 'nvmesim sweep --help')", each wrapped at 79 columns.
std::string commands_usage_text();

}  // namespace nvmesim::platform::cli
