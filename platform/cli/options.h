// One argument-parsing style for every nvmesim command: Boost.Program_options
// with long options `--name=value` or `--name value`, `-h` for help, names
// never abbreviated, and Boost's errors turned into one line that names the
// option as the user typed it.
//
//   nvmesim [options]                  platform/cli/cli.cpp
//   nvmesim eventidx|scenario|sweep|validate ...   their *_cli.cpp
//
// Every command reads the options in command-line order (parse_options
// returns them so), because order carries meaning in some of them (a sweep's
// first --grid is the outermost loop; a later repeated option wins).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace nvmesim::platform::cli {

namespace po = boost::program_options;

// A usage error: what() is the one-line message (no "nvmesim: error: " prefix).
struct UsageError : std::runtime_error {
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

struct ParseRules {
  // Words that are not options go to this option (e.g. "reference", "name");
  // empty: a word is an error ("unexpected argument 'x' (...)").
  std::string positional;
  // Options nobody declared are kept (option.unregistered, with the tokens as
  // typed in option.original_tokens) instead of being refused; the sweep
  // passes them on to every point's run. Words after such an option are kept
  // as positionals of their own (the option's value, as typed).
  bool keep_unknown = false;
  // Appended to "unknown option 'x'" and to "unexpected argument 'x'".
  std::string see_unknown = "(see --help)";
  std::string see_word = "(see --help)";
};

// argv[0] is the command's name and is skipped. Throws UsageError.
std::vector<po::option> parse_options(int argc, const char* const* argv, const po::options_description& desc,
                                      const ParseRules& rules = {});

// The options stored as Boost's variables_map (for commands that look
// options up by name; a single-valued option given twice is refused).
po::variables_map to_variables(const std::vector<po::option>& options, const po::options_description& desc);

// The value of an option that takes one ("" for a switch).
std::string value_of(const po::option& option);

}  // namespace nvmesim::platform::cli
