#include "nvmesim/platform/cli/options.h"

#include <cctype>

#include "nvmesim/platform/config/user_text.h"

namespace nvmesim::platform::cli {

namespace {

// "--nvme.foo=3" -> "--nvme.foo"
std::string option_token(std::string name) {
  const size_t eq = name.find('=');
  if (eq != std::string::npos && name.rfind("--", 0) == 0) name.erase(eq);
  return name;
}

}  // namespace

po::variables_map to_variables(const std::vector<po::option>& options, const po::options_description& desc) {
  po::parsed_options parsed(&desc);
  for (const po::option& o : options)
    if (!o.unregistered) parsed.options.push_back(o);
  po::variables_map vm;
  try {
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::multiple_occurrences& e) {
    throw UsageError(shown(e.get_option_name()) + ": given more than once");
  } catch (const po::error& e) {
    throw UsageError(shown(e.what()));
  }
  return vm;
}

std::string value_of(const po::option& option) {
  return option.value.empty() ? std::string() : option.value.front();
}

std::vector<po::option> parse_options(int argc, const char* const* argv, const po::options_description& desc,
                                      const ParseRules& rules) {
  po::options_description all;
  all.add(desc);
  po::positional_options_description positional;
  if (!rules.positional.empty()) positional.add(rules.positional.c_str(), -1);
  po::parsed_options parsed(nullptr);
  try {
    const auto style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::command_line_parser parser(argc, argv);
    parser.options(all).style(style);
    // Without a positional description a word comes back as an option with a
    // position_key and is refused below by name.
    if (!rules.positional.empty()) parser.positional(positional);
    if (rules.keep_unknown) parser.allow_unregistered();
    parsed = parser.run();
  } catch (const po::unknown_option& e) {
    throw UsageError("unknown option " + quoted(option_token(e.get_option_name())) + " " + rules.see_unknown);
  } catch (const po::invalid_command_line_syntax& e) {
    const std::string name = shown(option_token(e.get_option_name()));
    switch (e.kind()) {
      case po::invalid_syntax::missing_parameter: throw UsageError(name + ": missing value");
      case po::invalid_syntax::empty_adjacent_parameter: throw UsageError(name + ": empty value after '='");
      case po::invalid_syntax::extra_parameter: throw UsageError(name + ": takes no value");
      default: throw UsageError(name + ": bad syntax");
    }
  } catch (const po::too_many_positional_options_error&) {
    throw UsageError("too many arguments " + rules.see_word);
  } catch (const po::error& e) {
    throw UsageError(shown(e.what()));  // Boost's message echoes the token as typed
  }
  for (const po::option& opt : parsed.options) {
    if (opt.unregistered) continue;
    const std::string value = value_of(opt);
    if (opt.position_key >= 0) {
      if (rules.positional.empty() && !rules.keep_unknown)
        throw UsageError("unexpected argument " + quoted(value) + " " + rules.see_word);
      continue;
    }
    // "--bs --iodepth 3": Boost takes "--iodepth" as the value of --bs.
    if (opt.original_tokens.size() == 2 && value.size() >= 2 && value[0] == '-' &&
        (value[1] == '-' || std::isalpha(static_cast<unsigned char>(value[1]))))
      throw UsageError("--" + opt.string_key + ": missing value (got " + quoted(value) + ")");
  }
  return parsed.options;
}

}  // namespace nvmesim::platform::cli
