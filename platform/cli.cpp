// The command-line front end (see cli.h).
#include "platform/cli.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include <boost/program_options.hpp>

#ifndef NVMESIM_VERSION
#define NVMESIM_VERSION "unknown"
#endif

namespace po = boost::program_options;

namespace nvmesim::platform {

namespace {

const char* const kFioNames[] = {"rw", "bs", "iodepth", "numjobs", "runtime",
                                 "number_ios", "size", "rwmixread", "seed"};

CliResult error(std::string message) {
  CliResult r;
  r.action = CliResult::Error;
  r.message = std::move(message);
  r.exit_code = 2;
  return r;
}

// "--nvme.foo=3" -> "--nvme.foo"
std::string option_token(std::string name) {
  size_t eq = name.find('=');
  if (eq != std::string::npos && name.rfind("--", 0) == 0) name.erase(eq);
  return name;
}

po::options_description all_options(const ParamRegistry& registry) {
  po::options_description desc;
  desc.add_options()
      ("help,h", "")
      ("version", "")
      ("list-params", "")
      ("config", po::value<std::string>(), "")
      ("output-format", po::value<std::string>(), "")
      ("output", po::value<std::string>(), "")
      ("host-stats", "");
  for (const ParamSpec& spec : registry.all())
    desc.add_options()(spec.name.c_str(), po::value<std::string>(), "");
  return desc;
}

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

// `left` then `text` word-wrapped at `width` columns, continuation lines
// indented to the width of `left`.
std::string wrap(const std::string& left, const std::string& text, size_t width) {
  std::string out = left, word;
  size_t col = left.size();
  bool first = true;
  std::istringstream words(text);
  while (words >> word) {
    if (!first && col + 1 + word.size() > width) {
      out += "\n" + std::string(left.size(), ' ');
      col = left.size();
      first = true;
    }
    if (!first) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
    first = false;
  }
  return out + "\n";
}

}  // namespace

std::string version_text() { return std::string("nvmesim ") + NVMESIM_VERSION; }

std::string help_text() {
  const ParamRegistry& reg = ParamRegistry::builtin();
  std::ostringstream o;
  o << "Usage:\n"
       "  nvmesim [options]\n"
       "  nvmesim eventidx ...     explain or check the EventIdx doorbell decision\n"
       "                           (see 'nvmesim eventidx --help')\n"
       "\n"
       "Simulates a virtualized NVMe I/O path (guest driver, hypervisor exits, PCIe,\n"
       "NVMe controller with the doorbell buffer) and reports doorbell exits,\n"
       "EventIdx hit rates and I/O latency.\n"
       "\n"
       "With no options, runs the default experiment: 4 KiB random reads, iodepth 32,\n"
       "1 job, null backend, doorbell buffer off and on side by side.\n"
       "With any parameter option or --config, runs the one experiment so configured.\n"
       "\n"
       "Generic options:\n"
       "  -h [ --help ]              print this help and exit\n"
       "  --version                  print the version and exit\n"
       "  --list-params              list every parameter: name, default, unit, range\n"
       "                             or choices, help; and exit\n"
       "  --config FILE              read parameters from an INI file; repeatable,\n"
       "                             later files and command-line values override\n"
       "  --output-format FORMAT     normal (default) or json\n"
       "  --output FILE              write the results to FILE instead of stdout\n"
       "  --host-stats               add wall time, peak RSS and I/Os per wall second\n"
       "\n"
       "Workload options (fio's names):\n";
  for (const char* name : kFioNames) {
    const ParamSpec* spec = reg.find(name);
    if (!spec) continue;
    std::string left = "  --" + spec->name + " " + kind_name(spec->kind);
    std::string right = spec->help + "; " +
                        (spec->kind == ParamKind::Choice ? "one of " : "range ") +
                        format_range(*spec) + "; default " + spec->default_value;
    o << wrap(pad(left, 24), right, 79);
  }
  o << "\n"
       "Model parameters: every --component.name listed by --list-params; also\n"
       "settable in --config FILE as 'name = value' under [component].\n"
       "  e.g.  --hv.exit_mmio=2250cyc  --nvme.dbbuf off  --pcie.lanes 8\n"
       "\n"
       "Values: times need a unit: ns, us, ms, s, or cyc (CPU cycles at hv.cpu_ghz);\n"
       "sizes are bytes, or with k, m, g, t (binary; also KiB, MiB, GiB, TiB);\n"
       "booleans are on/off, true/false, yes/no, 1/0. Option names are never\n"
       "abbreviated; a repeated option: the last one wins.\n"
       "\n"
       "Config file (INI): '#' starts a comment; keys before the first [section]\n"
       "are full names (the workload's flat names such as 'bs = 4k', or dotted\n"
       "ones); a [fio] section also holds the flat names; under [hv], 'exit_mmio =\n"
       "5100cyc' sets hv.exit_mmio.\n"
       "\n"
       "Exit status: 0 success, 1 internal error, 2 usage or configuration error.\n";
  return o.str();
}

std::string list_params_text(const ParamRegistry& registry) {
  struct Row { std::string name, def, unit, range, help; };
  std::vector<Row> rows;
  rows.push_back({"NAME", "DEFAULT", "UNIT", "RANGE/CHOICES", "HELP"});
  for (const ParamSpec& s : registry.all())
    rows.push_back({s.name, s.default_value, s.unit.empty() ? "-" : s.unit, format_range(s), s.help});
  size_t w[4] = {0, 0, 0, 0};
  for (const Row& r : rows) {
    w[0] = std::max(w[0], r.name.size());
    w[1] = std::max(w[1], r.def.size());
    w[2] = std::max(w[2], r.unit.size());
    w[3] = std::max(w[3], r.range.size());
  }
  std::ostringstream o;
  for (const Row& r : rows)
    o << pad(r.name, w[0] + 2) << pad(r.def, w[1] + 2) << pad(r.unit, w[2] + 2)
      << pad(r.range, w[3] + 2) << r.help << "\n";
  return o.str();
}

CliResult parse_command_line(int argc, const char* const* argv) {
  if (argc > 1 && std::string(argv[1]) == "eventidx") {
    CliResult r;
    r.action = CliResult::Subcommand;
    r.message = "eventidx";
    return r;
  }

  const ParamRegistry& registry = ParamRegistry::builtin();
  po::parsed_options parsed(nullptr);
  try {
    auto style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    parsed = po::command_line_parser(argc, argv).options(all_options(registry)).style(style).run();
  } catch (const po::unknown_option& e) {
    std::string name = option_token(e.get_option_name());
    return error("unknown option '" + name + "' (see --help and --list-params)");
  } catch (const po::invalid_command_line_syntax& e) {
    std::string name = option_token(e.get_option_name());
    switch (e.kind()) {
      case po::invalid_syntax::missing_parameter: return error(name + ": missing value");
      case po::invalid_syntax::empty_adjacent_parameter: return error(name + ": empty value after '='");
      case po::invalid_syntax::extra_parameter: return error(name + ": takes no value");
      default: return error(name + ": bad syntax");
    }
  } catch (const po::error& e) {
    return error(e.what());
  }

  bool help = false, version = false, list = false;
  std::vector<std::string> configs;
  std::vector<std::pair<std::string, std::string>> params;
  RunOptions options;
  for (const po::option& opt : parsed.options) {
    if (opt.position_key >= 0) {
      std::string arg = opt.value.empty() ? std::string() : opt.value.front();
      return error("unexpected argument '" + arg + "' (options are --name=value; see --help)");
    }
    const std::string& key = opt.string_key;
    const std::string value = opt.value.empty() ? std::string() : opt.value.front();
    // "--bs --iodepth 3": Boost takes "--iodepth" as the value of --bs.
    if (opt.original_tokens.size() == 2 && value.size() >= 2 && value[0] == '-' &&
        (value[1] == '-' || std::isalpha(static_cast<unsigned char>(value[1]))))
      return error("--" + key + ": missing value (got '" + value + "')");
    if (key == "help") help = true;
    else if (key == "version") version = true;
    else if (key == "list-params") list = true;
    else if (key == "host-stats") options.host_stats = true;
    else if (key == "config") configs.push_back(value);
    else if (key == "output-format") options.output_format = value;
    else if (key == "output") options.output_file = value;
    else params.emplace_back(key, value);
  }

  CliResult r;
  r.exit_code = 0;
  if (help) {
    r.action = CliResult::Help;
    r.message = help_text();
    return r;
  }
  if (version) {
    r.action = CliResult::Version;
    r.message = version_text();
    return r;
  }
  if (list) {
    r.action = CliResult::ListParams;
    r.message = list_params_text(registry);
    return r;
  }
  if (options.output_format != "normal" && options.output_format != "json")
    return error("--output-format: '" + options.output_format + "' is not one of normal, json");
  for (const std::string& c : configs)
    if (c.empty()) return error("--config: empty file name");
  // "--output=" is caught by Boost; "--output ''" lands here.
  for (const po::option& opt : parsed.options)
    if (opt.string_key == "output" && (opt.value.empty() || opt.value.front().empty()))
      return error("--output: empty file name");

  try {
    for (const std::string& c : configs) r.config.load_ini(c);
    for (const auto& [name, value] : params) r.config.set(name, value);
    r.config.validate_all();
  } catch (const ConfigError& e) {
    return error(e.what());
  }
  options.default_experiment = params.empty() && configs.empty();
  r.options = options;
  r.action = CliResult::Run;
  return r;
}

}  // namespace nvmesim::platform
