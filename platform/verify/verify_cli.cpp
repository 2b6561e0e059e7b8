#include "nvmesim/platform/verify/verify.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/cli/options.h"
#include "nvmesim/platform/config/input_file.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/platform/verify/canonical.h"
#include "nvmesim/platform/verify/report.h"
#include "nvmesim/traces/gtkwave_save.h"
#include "nvmesim/platform/report/pending_file.h"
#include "nvmesim/traces/timeline_writer.h"
#include "nvmesim/traces/vcd_writer.h"
#include "nvmesim/platform/verify/search.h"

namespace po = boost::program_options;

namespace nvmesim::platform {
namespace {

using verify::Checked;
using verify::ModelConfig;

constexpr const char* kPrefix = "nvmesim verify: error: ";

// MemAvailable from /proc/meminfo (bytes); 0 when unknown.
uint64_t available_memory_bytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}

struct UsageError {
  std::string message;
};
// An output that failed while written (exit 5: results not written).
struct WriteError {
  std::string message;
};

// The simulator's parameters verify takes, read from the parameter registry
// (names, choices, ranges, defaults).
const char* const kSimParams[] = {
    "nvme.dbbuf",          "nvme.sq_eventidx",   "nvme.cq_eventidx",         "nvme.mmio_doorbell_value",
    "guest.need_event",    "guest.dbbuf_full_barrier", "guest.admin_shadow", "guest.io_cq_entries",
};

// verify's own choices.
struct OwnChoice {
  const char* name;
  std::vector<std::string> choices;
  const char* def;
  const char* help;
};
const std::vector<OwnChoice>& own_choices() {
  static const std::vector<OwnChoice> list = {
      {"queue", {"io", "admin"}, "io", "the queue pair: an I/O queue (qid 1) or the admin queue (qid 0)"},
      {"memory-model", {"x86", "arm"}, "x86",
       "guest store order: x86 (TSO store buffer) or arm (stores also reorder unless a write barrier)"},
      {"device-order", {"store-barrier-load", "store-load", "load-store"}, "store-barrier-load",
       "device's EventIdx store vs shadow re-read (store-barrier-load: the firmware's)"},
      {"reset", {"off", "zeroed", "stale"}, "off",
       "a controller reset once in mid-run; the doorbell buffer cleared (zeroed) or kept (stale)"},
  };
  return list;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

// A simulator parameter's values: each checked (and made canonical) by the
// project's Config; "all" is every choice of a Choice or Bool parameter.
std::vector<std::string> sim_values(const std::string& name, const std::string& text) {
  const ParamSpec* spec = ParamRegistry::builtin().find(name);
  std::vector<std::string> items = split_list(text);
  if (items.size() == 1 && items[0] == "all") {
    if (spec->kind == ParamKind::Choice) items = spec->choices;
    else if (spec->kind == ParamKind::Bool) items = {"off", "on"};
    else throw UsageError{"--" + name + ": 'all' needs a choice or on/off parameter; give values as a comma list"};
  }
  std::vector<std::string> out;
  for (const std::string& item : items) {
    Config cfg;
    try {
      cfg.set(name, item);
    } catch (const ConfigError& e) {
      throw UsageError{e.what()};
    }
    out.push_back(cfg.text(name));
  }
  return out;
}

std::vector<std::string> own_values(const OwnChoice& o, const std::string& text) {
  std::vector<std::string> items = split_list(text);
  if (items.size() == 1 && items[0] == "all") return o.choices;
  for (const std::string& item : items) {
    bool ok = false;
    for (const std::string& c : o.choices) ok = ok || c == item;
    if (!ok)
      throw UsageError{"--" + std::string(o.name) + ": " + quoted(item) + " is not one of " + join(o.choices, ", ") +
                       " (or all)"};
  }
  return items;
}

uint32_t bounded_number(const po::variables_map& vm, const std::string& name, uint32_t lo, uint32_t hi) {
  const std::string& text = vm[name].as<std::string>();
  uint64_t v = 0;
  bool ok = !text.empty() && text.size() <= 9;
  for (char ch : text) ok = ok && ch >= '0' && ch <= '9';
  if (ok)
    for (char ch : text) v = v * 10 + uint64_t(ch - '0');
  if (!ok || v < lo || v > hi)
    throw UsageError{"--" + name + ": " + quoted(text) + " is out of range (" + std::to_string(lo) + ".." +
                     std::to_string(hi) + ")"};
  return uint32_t(v);
}

fw::EventIdxPolicy policy(const std::string& s) {
  if (s == "lag") return fw::EventIdxPolicy::Lag;
  if (s == "park") return fw::EventIdxPolicy::Park;
  if (s == "never") return fw::EventIdxPolicy::Never;
  return fw::EventIdxPolicy::Echo;
}

// One combination of values -> the model (the "auto" choices resolved as
// the simulator's System does: echo / use for spec, never / ignore for vendor).
ModelConfig resolve(const std::map<std::string, std::string>& v, uint32_t qsize, uint32_t commands) {
  ModelConfig c;
  c.qsize = qsize;
  c.commands = commands;
  const std::string& dbbuf = v.at("nvme.dbbuf");
  c.dbbuf = dbbuf == "off" ? fw::DbbufMode::Off : dbbuf == "vendor" ? fw::DbbufMode::Vendor : fw::DbbufMode::Spec;
  c.sq_eventidx = policy(v.at("nvme.sq_eventidx"));
  const std::string& cq = v.at("nvme.cq_eventidx");
  c.cq_eventidx = cq == "auto" ? (dbbuf == "vendor" ? fw::EventIdxPolicy::Never : fw::EventIdxPolicy::Echo)
                               : policy(cq);
  const std::string& mmio = v.at("nvme.mmio_doorbell_value");
  c.mmio_doorbell_value = mmio == "ignore" || (mmio == "auto" && dbbuf == "vendor") ? fw::MmioDoorbellValue::Ignore
                                                                                    : fw::MmioDoorbellValue::Use;
  c.need_event = v.at("guest.need_event") == "inclusive" ? fw::NeedEventForm::Inclusive : fw::NeedEventForm::Linux;
  c.full_barrier = v.at("guest.dbbuf_full_barrier") == "on";
  c.admin_shadow = v.at("guest.admin_shadow") == "on";
  const uint32_t cq_entries = uint32_t(std::stoul(v.at("guest.io_cq_entries")));
  if (cq_entries == 1 || cq_entries > verify::kMaxRing)
    throw UsageError{"--guest.io_cq_entries: " + std::to_string(cq_entries) +
                     " is out of range for verify (0 = as the SQ, or 2.." + std::to_string(verify::kMaxRing) + ")"};
  c.cq_entries = cq_entries;
  c.qid = v.at("queue") == "admin" ? 0 : 1;
  c.memory = v.at("memory-model") == "arm" ? verify::MemoryModel::Arm : verify::MemoryModel::X86;
  const std::string& order = v.at("device-order");
  c.device_order = order == "store-load"   ? verify::DeviceOrder::StoreLoad
                   : order == "load-store" ? verify::DeviceOrder::LoadStore
                                           : verify::DeviceOrder::StoreBarrierLoad;
  const std::string& reset = v.at("reset");
  c.reset = reset == "zeroed" ? verify::ResetMode::Zeroed
            : reset == "stale" ? verify::ResetMode::Stale
                               : verify::ResetMode::Off;
  return c;
}

void print_help(std::ostream& out, const po::options_description& desc) {
  out << "Usage: nvmesim verify [--qsize N] [--commands K] [parameters] [--vcd FILE] [--timeline FILE]\n"
         "\n"
         "Explores every interleaving of the guest driver's and the device's accesses to\n"
         "one SQ/CQ pair (each access the other side can see is one step; x86 or Arm\n"
         "store buffers; the device chooses when it runs and how far) and checks: no lost\n"
         "wake-up, no queue overflow, no entry processed twice or skipped, no EventIdx\n"
         "ahead of what the device was given. Prints \"no violation in S states (T s)\",\n"
         "or the shortest counterexample as numbered steps. The simulator's parameters\n"
         "take the same names and values, with their defaults; each takes a comma list\n"
         "or 'all', and every combination is checked. See docs/verify.md.\n"
         "Exit status: 0 no violation, 1 a counterexample, 2 bad input; 130, 143, 129\n"
         "after SIGINT, SIGTERM, SIGHUP (the search stops, what it covered is printed,\n"
         "marked INTERRUPTED).\n\n"
      << desc;
}

}  // namespace

int run_verify_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    po::options_description desc("Options");
    desc.add_options()("help,h", "this help")
        ("qsize", po::value<std::string>()->default_value("4"), "SQ entries (2..8)")
        ("commands", po::value<std::string>()->default_value("12"), "I/Os the guest completes (1..64)");
    const ParamRegistry& registry = ParamRegistry::builtin();
    for (const char* name : kSimParams) {
      const ParamSpec* spec = registry.find(name);
      desc.add_options()(name, po::value<std::string>()->default_value(spec->default_value),
                         (spec->help + " [" + format_range(*spec) + "]").c_str());
    }
    for (const OwnChoice& o : own_choices())
      desc.add_options()(o.name, po::value<std::string>()->default_value(o.def),
                         (std::string(o.help) + " [" + join(o.choices, "|") + "]").c_str());
    desc.add_options()
        ("output-format", po::value<std::string>()->default_value("text"), "text or json")
        ("vcd", po::value<std::string>(), "write the counterexample as a VCD (the simulator's signal names) and its GTKWave save file")
        ("timeline", po::value<std::string>(), "write the counterexample as a Chrome trace-event timeline")
        ("max-states", po::value<std::string>()->default_value("50000000"),
         "stop a search after this many states (1..1000000000; the default is also at most "
         "a quarter of the available memory, at 120 bytes a state)")
        ("time", po::value<std::string>()->default_value("on"), "print elapsed times (off: byte-identical output)");
    const po::variables_map vm = cli::to_variables(cli::parse_options(argc, argv, desc), desc);
    if (vm.count("help")) {
      print_help(out, desc);
      return 0;
    }
    const uint32_t qsize = bounded_number(vm, "qsize", 2, verify::kMaxRing);
    const uint32_t commands = bounded_number(vm, "commands", 1, verify::kMaxCommands);
    uint64_t max_states = bounded_number(vm, "max-states", 1, 1000000000);
    std::string truncated_note = "stopped at --max-states";
    if (vm["max-states"].defaulted()) {
      // The default fits the machine: at most a quarter of the available
      // memory (a qsize 8, 64-command search took 4.4 GB at 50 000 000).
      const uint64_t fits = std::max<uint64_t>(1000000, available_memory_bytes() / 4 / verify::kStateBytes);
      if (fits < max_states) {
        max_states = fits;
        truncated_note = "stopped at the default --max-states, " + std::to_string(fits) +
                         ", a quarter of the available memory; --max-states=N needs about N x " +
                         std::to_string(verify::kStateBytes) + " bytes";
      }
    }
    const std::string format = vm["output-format"].as<std::string>();
    if (format != "text" && format != "json")
      throw UsageError{"--output-format: " + quoted(format) + " is not one of text, json"};
    const std::string time = vm["time"].as<std::string>();
    if (time != "on" && time != "off") throw UsageError{"--time: " + quoted(time) + " is not one of on, off"};

    // The outputs (the GTKWave save file beside --vcd included) are distinct files.
    {
      NamedFiles outputs;
      if (vm.count("vcd")) {
        outputs.emplace_back("--vcd", vm["vcd"].as<std::string>());
        if (not_regular_reason(vm["vcd"].as<std::string>()).empty())
          outputs.emplace_back("the GTKWave save file of --vcd", traces::gtkwave_save_path(vm["vcd"].as<std::string>()));
      }
      if (vm.count("timeline")) outputs.emplace_back("--timeline", vm["timeline"].as<std::string>());
      if (const std::string e = clashing_files({}, outputs); !e.empty()) throw UsageError{e};
      for (const auto& [option, name] : outputs)
        if (const std::string e = output_path_problem(name); !e.empty())
          throw UsageError{(option.rfind("--", 0) == 0 ? option : "--vcd: " + option.substr(0, option.find(" of "))) +
                           (option.rfind("--", 0) == 0 ? ": cannot write " : " cannot be written: ") + quoted(name) +
                           " (" + e + ")"};
    }
    // Every option's values, in the help's order; the last varies fastest.
    std::vector<std::pair<std::string, std::vector<std::string>>> axes;
    for (const char* name : kSimParams) axes.push_back({name, sim_values(name, vm[name].as<std::string>())});
    for (const OwnChoice& o : own_choices()) axes.push_back({o.name, own_values(o, vm[o.name].as<std::string>())});

    std::vector<Checked> runs;
    std::vector<size_t> at(axes.size(), 0);
    for (;;) {
      Checked run;
      std::map<std::string, std::string> values;
      for (size_t i = 0; i < axes.size(); ++i) {
        const std::string& v = axes[i].second[at[i]];
        values[axes[i].first] = v;
        run.settings.push_back({axes[i].first, v});
        if (axes[i].second.size() > 1) run.label += (run.label.empty() ? "" : " ") + axes[i].first + "=" + v;
      }
      run.config = resolve(values, qsize, commands);
      runs.push_back(run);
      size_t i = axes.size();
      while (i > 0 && ++at[i - 1] == axes[i - 1].second.size()) at[--i] = 0;
      if (i == 0) break;
    }

    const auto start = std::chrono::steady_clock::now();
    std::map<std::string, size_t> searched;  // model key -> index in runs
    // SIGINT/SIGTERM/SIGHUP end the search within milliseconds; what was
    // searched is reported, marked interrupted, and the exit status is 128 +
    // the signal (platform/cli/interrupt.h).
    bool (*const signalled)() = [] { return interrupt::received() != 0; };
    for (size_t i = 0; i < runs.size(); ++i) {
      const std::string key = verify::model_key(runs[i].config);
      auto it = searched.find(key);
      if (it != searched.end()) {
        runs[i].result = runs[it->second].result;
        runs[i].seconds = 0;
        continue;
      }
      if (signalled()) {
        runs[i].searched = false;
        continue;
      }
      const auto t0 = std::chrono::steady_clock::now();
      runs[i].result = verify::search(runs[i].config, max_states, signalled);
      runs[i].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      searched[key] = i;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    verify::ReportOptions ro;
    ro.json = format == "json";
    ro.truncated_note = truncated_note;
    ro.show_time = time == "on";
    bool incomplete = false;
    for (const Checked& r : runs) incomplete = incomplete || !r.searched || r.result.interrupted;
    if (incomplete) ro.interrupted_by = interrupt::signal_name(interrupt::received());
    int status = 0;
    const Checked* first_violation = nullptr;
    for (const Checked& r : runs)
      if (r.result.property != verify::Property::None) {
        status = 1;
        if (!first_violation) first_violation = &r;
      }
    // The shortest counterexample as a waveform (and GTKWave's save file
    // beside it) or a timeline, with the simulator's signal names.
    for (const char* option : {"vcd", "timeline"}) {
      if (!vm.count(option) || !first_violation) continue;
      const std::string path = vm[option].as<std::string>();
      const std::string refused = std::string("--") + option + ": cannot write " + quoted(path);
      std::FILE* f = std::fopen(path.c_str(), "w");
      if (!f) throw WriteError{refused};
      traces::TraceOptions topts;
      if (std::string(option) == "vcd") {
        traces::VcdWriter vcd(f, topts);
        verify::write_trace(vcd, *first_violation);
        // A save file only beside a regular file (not /dev/null.gtkw).
        if (not_regular_reason(path).empty()) {
          const std::string save = traces::gtkwave_save_path(path);
          std::FILE* g = std::fopen(save.c_str(), "w");
          if (!g) throw WriteError{"--vcd: cannot write " + quoted(save)};
          std::fputs(traces::gtkwave_save_file(vcd.signal_list(), path, {0, verify::trace_end_ps(*first_violation)})
                         .c_str(),
                     g);
          const bool bad = std::ferror(g);
          if (std::fclose(g) != 0 || bad) throw WriteError{"--vcd: cannot write " + quoted(save)};
        }
      } else {
        traces::TimelineWriter timeline(f, topts);
        verify::write_trace(timeline, *first_violation);
      }
      const bool bad = std::ferror(f) || std::fflush(f) != 0;
      if (std::fclose(f) != 0 || bad) throw WriteError{refused};
    }
    if (ro.json) verify::write_json(out, runs, ro, seconds);
    else verify::write_text(out, runs, ro, seconds);
    for (const char* option : {"vcd", "timeline"})
      if (vm.count(option) && !first_violation && !ro.json)
        out << "--" << option << ": no counterexample, nothing written\n";
    return interrupt::received() ? interrupt::exit_code() : status;
  } catch (const UsageError& e) {
    err << kPrefix << e.message << '\n';
    return 2;
  } catch (const WriteError& e) {
    err << kPrefix << e.message << '\n';
    return 5;  // platform/cli/exit_codes.h: results not written
  } catch (const cli::UsageError& e) {
    err << kPrefix << e.what() << '\n';
    return 2;
  }
}

}  // namespace nvmesim::platform
