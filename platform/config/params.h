// Model parameters: one naming scheme for the command line, config files and
// sweep grids.
//
// Where a parameter is declared: once, by a visit line beside its field in
// its component's Params struct (models/sim/param_visit.h has the protocol):
//   struct NvmeControllerModel::Params {            // models/nvme/nvme_controller.h
//     sc_core::sc_time cmd_cost;
//     static constexpr const char* param_prefix = "nvme";
//     template <class V> void visit(V& v) {
//       v.time(cmd_cost, "cmd_cost", "1us", 0, 1 * MS, "host CPU time per command processed");
//       ...
// The visit line holds the name, the default (as text: "5100cyc" follows
// hv.cpu_ghz), unit, range and help. Two visitors (platform/config/visitors.h)
// walk it: ParamSpecBuilder builds the ParamRegistry below (param_list.cpp
// lists the components in --list-params order), ConfigReader fills the struct
// from a Config (load_params<P>). A choice's names come from its enum's table
// (firmware/sim/enum_table.h). Checks across parameters: Config::validate_all for
// one Config, check_system_params (platform/config/system_params.h) for what
// needs the whole system; dependencies that leave a setting inert:
// param_requires.cpp.
//
// Every model parameter has a hierarchical name `component.name`
// (`hv.exit_mmio`, `nvme.mqes`, `pcie.lanes`); fio's workload names stay
// flat (`rw`, `bs`, `iodepth`, `numjobs`, `runtime`, `number_ios`, `size`,
// `rwmixread`, `seed`). The same name is
//   - a long option:          --hv.exit_mmio=5100cyc  or  --hv.exit_mmio 5100cyc
//   - an INI key (--config):  `exit_mmio = 5100cyc` under `[hv]`
//   - a sweep-grid axis:      Config::set("hv.exit_mmio", "5100cyc")
//
// Value kinds (all values are text; Config::set validates them at once):
//   Time     a number with a unit: ns, us, ms, s, or cyc (CPU cycles at
//            hv.cpu_ghz). A bare number is an error. The text is kept and
//            converted on read, so `cyc` follows later changes of hv.cpu_ghz.
//   Size     bytes: a bare number, or with k, m, g, t (binary; also K, M, G,
//            T and KiB, MiB, GiB, TiB; a trailing b/B is allowed: 4kb = 4k).
//   Integer  a decimal integer.
//   Real     a decimal number.
//   Bool     on/off, true/false, yes/no, 1/0.
//   Choice   one of a fixed list (case-sensitive).
//   Text     anything its check (ParamSpec::check) accepts.
// Ranges (ParamSpec::min/max) are inclusive and in the kind's base unit:
// nanoseconds for Time, bytes for Size.
//
// INI files (Config::load_ini), the conventions of Boost.Program_options'
// parse_config_file plus line numbers in errors:
//   - `name = value` lines; `#` anywhere starts a comment, and so does `;`
//     at the start of a line or after a blank (`[hv] ; host`, `x = 1 ; why`);
//     blank lines are ignored; spaces around names and values are trimmed;
//   - `[component]` starts a section: its keys are `component.key`;
//   - keys before the first section are full names: the flat fio names
//     (`bs = 4k`) or dotted names (`hv.exit_mmio = 5100cyc`);
//   - a `[fio]` section holds flat fio names too (`[fio]` `bs = 4k` is `bs`);
//   - a key given twice in one file is an error; values from a later file (or
//     from the command line, applied after the files) override earlier ones.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nvmesim::platform {

// A user error in a configuration value or file. what() is the whole
// one-line message, naming the field and the allowed values or range, e.g.
//   --hv.exit_mmio: '5100' needs a unit (ns, us, ms, s or cyc)
//   --nvme.dbbuf: 'maybe' is not one of off, spec, vendor
//   --iodepth: 0 is out of range (1..4095)
//   unknown parameter 'nvme.foo' (see --list-params)
//   config file x.ini line 3: unknown key 'hv.exit_mmo' (see --list-params)
struct ConfigError : std::runtime_error {
  explicit ConfigError(const std::string& message) : std::runtime_error(message) {}
};

enum class ParamKind { Time, Size, Integer, Real, Bool, Choice, Text };

// "time", "size", "integer", "real", "bool", "choice", "text".
const char* kind_name(ParamKind kind);

struct ParamSpec {
  std::string name;           // "component.name", or a flat fio name
  ParamKind kind;
  std::string default_value;  // text, as a user would type it
  std::string unit;           // display text for --list-params ("bytes", "GHz", ...)
  double min = 0, max = 0;    // inclusive, base unit (ns, bytes); Time/Size/Integer/Real
  std::vector<std::string> choices;  // Choice
  std::string help;           // one line
  // Integer: also accepts k, m, g (1024-based, as fio reads counts such as
  // number_ios with its default kb_base=1024).
  bool count_suffixes = false;
  // Time: a bare number means nanoseconds (a parameter that once took ns).
  bool bare_ns = false;
  std::string alias = "";     // another accepted name (e.g. the newer spelling)
  // Text: "" or what is wrong with a value (checked by Config::set).
  std::string (*check)(const std::string&) = nullptr;
  // Real: a value other than 0 is at least this (0: no such bound). Time:
  // a value other than 0 is always at least kTimeResolutionNs.
  double min_nonzero = 0;
};

// The simulator's time resolution (SystemC's default, 1 ps): a time other
// than 0 below it would round to 0 (no limit, no cost), so it is refused.
constexpr double kTimeResolutionNs = 0.001;

class ParamRegistry {
 public:
  // Throws std::logic_error on a duplicate name, an empty name, a Choice
  // without choices, min > max, or a default that does not validate
  // (except the range of a `cyc` default, which depends on hv.cpu_ghz and is
  // checked by Config::validate_all).
  void add(ParamSpec spec);
  const ParamSpec* find(const std::string& name) const;  // nullptr if unknown; aliases too
  const std::vector<ParamSpec>& all() const { return specs_; }  // in registration order
  // The model's parameters (register_builtin_params), built once.
  static const ParamRegistry& builtin();

 private:
  std::vector<ParamSpec> specs_;
  std::map<std::string, size_t> index_;
  friend class Config;
};

// platform/config/param_list.cpp: the builtin parameter list, the components' Params
// visited in --list-params order.
void register_builtin_params(ParamRegistry& registry);

class Config {
 public:
  // Every parameter starts at its default. The registry must outlive the
  // Config (the builtin one lives for the whole process).
  explicit Config(const ParamRegistry& registry = ParamRegistry::builtin());

  // Validates the text now (syntax, choices, range; for `cyc` times only the
  // sign, the rest in validate_all) and throws ConfigError, message
  // "--name: ...", or "unknown parameter 'name' (see --list-params)".
  void set(const std::string& name, const std::string& text);

  // Reads an INI file (conventions above) and sets its values. Errors name
  // the file and line: "config file F line N: ...", or
  // "config file F: cannot open (reason)".
  void load_ini(const std::string& path);
  // The same from a stream; `source` names it in errors.
  void load_ini(std::istream& in, const std::string& source);

  // Typed reads. An unknown name or a wrong kind is a programming error and
  // throws std::logic_error. integer() also reads a Choice whose choices are
  // all integers (pcie.lanes, pcie.mps, nvme.lba_bytes, ...).
  double time_ns(const std::string& name) const;       // Time, in ns (cyc converted now)
  uint64_t size_bytes(const std::string& name) const;  // Size
  int64_t integer(const std::string& name) const;      // Integer (or integer Choice)
  double real(const std::string& name) const;          // Real
  bool flag(const std::string& name) const;            // Bool
  const std::string& choice(const std::string& name) const;  // Choice
  const std::string& text(const std::string& name) const;    // Text (or any kind's canonical text)
  bool is_set(const std::string& name) const;  // given by the user (set/load_ini), not a default
  // The value came from a --preset (apply_preset), not the user's own setting.
  void mark_from_preset(const std::string& name);
  bool from_preset(const std::string& name) const;

  // Every parameter, sorted by name, with its canonical text: times as typed
  // but normalised ("5100cyc", "1.5us"), sizes with the largest exact binary
  // suffix ("4k", "1g", "1000"), booleans "on"/"off", numbers in shortest
  // form, choices and text as given.
  std::vector<std::pair<std::string, std::string>> effective() const;
  // The numeric parameters (Time in ns, Size in bytes, Integer, Real; Bool as
  // 0/1; not Choice/Text), sorted by name, in base units, for JSON.
  std::vector<std::pair<std::string, double>> effective_numeric() const;

  // Cross-field checks, run once every value is known (the command line does
  // this after the files and options). Throws ConfigError:
  //   - every Time in range after converting `cyc` with hv.cpu_ghz
  //     ("--hv.exit_mmio: 5000000cyc (2.17391ms at hv.cpu_ghz 2.3) is out of range (0ns..1ms)");
  //   - "number_ios and runtime are both 0";
  //   - size <= the device's capacity when it was given (nvme.capacity, or
  //     virtio.capacity with device=virtio-blk or its old spelling:
  //     device_backend.h; otherwise fit_namespace_to_size grows it), bs <=
  //     size, bs a multiple of nvme.lba_bytes;
  //   - guest.io_queue_entries <= nvme.mqes + 1 (CAP.MQES is 0's based).
  void validate_all() const;

  const ParamRegistry& registry() const { return *registry_; }

  // One parsed value (public so the implementation's helpers can fill it).
  struct Value {
    std::string canonical;
    double number = 0;    // Time: the number as typed; Size/Integer/Real/Bool: the value
    int time_unit = 0;    // Time: index into ns, us, ms, s, cyc
    int64_t integer = 0;  // Integer, integer Choice
    uint64_t bytes = 0;   // Size
    bool user_set = false;
    bool from_preset = false;  // the value a --preset gave (a later set clears it)
  };

 private:
  size_t index_of(const std::string& name) const;                  // logic_error if unknown
  const Value& checked(const std::string& name, ParamKind kind, const char* accessor) const;

  const ParamRegistry* registry_;
  std::vector<Value> values_;
};

// fio's size just works: when the device's capacity (nvme.capacity, or
// virtio.capacity with device=virtio-blk; platform/config/device_backend.h)
// was not given and a job's size (the largest of `configs`) exceeds it,
// every config's capacity grows to that size (whole 4 KiB pages). The RAM backend maps the namespace
// sparsely (MAP_NORESERVE), so memory follows what is written, not the size.
void fit_namespace_to_size(std::vector<Config*> configs);

// Formats for messages and tables: a time in ns with a readable unit
// ("0ns", "700ns", "1.5us", "10ms", "3600s"), a byte count with the largest
// exact binary suffix ("512", "4k", "1g"), and a ParamSpec's range or choices
// ("1ns..1ms", "512..1m", "1..4095", "read|write", "on|off", "-").
std::string format_time_ns(double ns);
// A time in ns as a parameter value that keeps it to 0.1 ns ("209937.6ns"),
// for values a program sets (calibrated or measured), not for people.
std::string time_value_text(double ns);
std::string format_size(uint64_t bytes);
std::string format_range(const ParamSpec& spec);

}  // namespace nvmesim::platform
