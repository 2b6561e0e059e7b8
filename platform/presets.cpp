#include "platform/presets.h"

#include <sstream>

#include "platform/params.h"
#include "platform/user_text.h"

namespace nvmesim::platform {

const std::vector<Preset>& presets() {
  // Exit costs in cycles as measured on each machine (Paolo Bonzini's reply in
  // the seeds' QEMU thread: ioeventfd cuts the MMIO exit by 55-70%).
  static const std::vector<Preset> list = {
      {"haswell-ep",
       "Haswell-EP host: trapped MMIO 5100 cycles, with ioeventfd 2250; port I/O 3800, with "
       "ioeventfd 1150",
       "seeds: qemu-devel thread 'nvme: support Google vendor extension' (Bonzini's figures)",
       {{"hv.exit_mmio", "5100cyc"},
        {"hv.exit_mmio_other", "5100cyc"},
        {"hv.exit_ioeventfd", "2250cyc"},
        {"hv.exit_pio", "3800cyc"},
        {"hv.exit_pio_ioeventfd", "1150cyc"}}},
      {"ivybridge-i7",
       "Ivy Bridge i7 host: trapped MMIO 7000 cycles, with ioeventfd 3000; port I/O 4100, with "
       "ioeventfd 1800",
       "seeds: qemu-devel thread 'nvme: support Google vendor extension' (Bonzini's figures)",
       {{"hv.exit_mmio", "7000cyc"},
        {"hv.exit_mmio_other", "7000cyc"},
        {"hv.exit_ioeventfd", "3000cyc"},
        {"hv.exit_pio", "4100cyc"},
        {"hv.exit_pio_ioeventfd", "1800cyc"}}},
  };
  return list;
}

void apply_preset(const std::string& name, Config& config) {
  std::string names;
  for (const Preset& p : presets()) {
    if (p.name == name) {
      for (const auto& [k, v] : p.values) config.set(k, v);
      return;
    }
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw ConfigError("--preset: " + quoted(name) + " is not one of " + names);
}

std::string list_presets_text() {
  std::ostringstream o;
  for (const Preset& p : presets()) {
    o << p.name << ": " << p.description << "\n  source: " << p.source << "\n  sets:";
    for (const auto& [k, v] : p.values) o << " " << k << "=" << v;
    o << "\n";
  }
  o << "(cycles convert at hv.cpu_ghz; later options override a preset)\n";
  return o.str();
}

}  // namespace nvmesim::platform
