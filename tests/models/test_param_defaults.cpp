// Params{} is the visit table's defaults as values (models/sim/param_defaults.h),
// the same values platform/'s Config reads from the same lines.
#include <catch2/catch.hpp>

#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/nvme/nvme_hw_engine.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/sim/param_settings.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/models/virtio/virtio_blk_model.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/visitors.h"

using namespace nvmesim;
using namespace nvmesim::models;

namespace {

// Each visited field as text "name=value" (times in ps, reals exactly).
class Recorder {
 public:
  std::vector<std::string> values;

  template <class F>
  void time(F& f, const char* name, const char*, double, double, const char*, ParamOptions = {}) {
    if constexpr (std::is_same_v<F, sc_core::sc_time>)
      put(name, std::to_string(f.value()) + "ps");
    else
      put(name, real_text(f));
  }
  template <class F>
  void size(F& f, const char* name, const char*, double, double, const char*) { put(name, std::to_string(f)); }
  template <class F>
  void integer(F& f, const char* name, const char*, const char*, double, double, const char*, ParamOptions = {}) {
    put(name, std::to_string(f));
  }
  template <class F>
  void real(F& f, const char* name, const char*, const char*, double, double, const char*, ParamOptions = {}) {
    put(name, real_text(f));
  }
  void flag(bool& f, const char* name, const char*, const char*) { put(name, f ? "on" : "off"); }
  void text(std::string& f, const char* name, const char*, std::string (*)(const std::string&), const char*) {
    put(name, f);
  }
  template <class E, size_t N>
  void choice(E& f, const char* name, const char*, const fw::EnumEntry<E> (&t)[N], const char*, const char*) {
    put(name, fw::enum_name(t, f));
  }
  template <class F, class I, size_t N, class = std::enable_if_t<std::is_integral_v<I>>>
  void choice(F& f, const char* name, const char*, const I (&)[N], const char*, const char*) {
    put(name, std::to_string(f));
  }
  template <class E, size_t N>
  void choice_or_auto(std::optional<E>& f, const char* name, const char*, const fw::EnumEntry<E> (&t)[N],
                      AutoChoice, const char*, const char*) {
    put(name, f ? fw::enum_name(t, *f) : "auto");
  }

 private:
  void put(const char* name, const std::string& v) { values.push_back(std::string(name) + "=" + v); }
  static std::string real_text(double d) {
    std::ostringstream o;
    o.precision(17);
    o << d;
    return o.str();
  }
};

template <class P>
std::vector<std::string> record(P p) {
  Recorder r;
  p.visit(r);
  return r.values;
}

}  // namespace

TEMPLATE_TEST_CASE("param defaults: default-constructed Params equal the configuration defaults", "[param_defaults]",
                   NvmeControllerModel::Params, PcieLinkParams, GuestMemoryParams, GuestParams,
                   WorkloadParams, VirtioBlkModel::Params, NotifierParams, MsiParams, NvmeHwEngineParams,
                   IoEngineParams) {
  const auto own = record(TestType{});
  const auto configured = record(platform::default_params<TestType>());
  REQUIRE(own.size() > 1);
  CHECK(own == configured);
}

TEST_CASE("param defaults: the controller's derived settings and the hardware engine's", "[param_defaults]") {
  const NvmeControllerModel::Params p;
  CHECK(p.firmware.namespace_lbas == (1ull << 30) / 512);  // nvme.capacity 1g of 512-byte LBAs
  CHECK(p.firmware.msix_vectors == 65);                      // one per queue: 64 I/O + admin
  CHECK(p.firmware.cq_eventidx == fw::EventIdxPolicy::Echo);
  CHECK(p.cmd_cost == sc_core::sc_time(1, sc_core::SC_US));
  CHECK(p.engine.clock_ghz == 1.0);
  CHECK(p.engine.command_parse == 32);
  // The link at its defaults validates (it used to throw "pcie.gen: 0 is not allowed").
  CHECK_NOTHROW(PcieLink(PcieLinkParams{}));
  CHECK(PcieLink(PcieLinkParams{}).describe() == PcieLink(platform::default_params<PcieLinkParams>()).describe());
}

namespace {
struct CyclesParams {
  sc_core::sc_time t;
  template <class V>
  void visit(V& v) { v.time(t, "t", "5100cyc", 0, 1e9, ""); }
};
}  // namespace

TEST_CASE("param defaults: a default that needs the platform is refused", "[param_defaults]") {
  CyclesParams p;
  CHECK_THROWS_AS(set_param_defaults(p), std::logic_error);
}

// A component user names one controller's settings under its instance
// prefix; the values read as the application's Config reads nvme.*.
TEST_CASE("param settings: nvme0.* and nvme1.* set two controllers' Params as nvme.* sets the application's",
          "[param_settings]") {
  const std::vector<std::string> settings = {"nvme0.mqes=63",         "nvme0.mdts=2",       "nvme0.backend=ram",
                                             "nvme0.capacity=16m",    "nvme0.clock=0.5",    "nvme1.mqes=15",
                                             "nvme1.backend_latency=20us", "nvme1.cq_eventidx=never",
                                             "nvme1.msix_table=bar0", "nvme1.lba_bytes=4096"};
  NvmeControllerModel::Params p[2];
  for (unsigned c = 0; c < 2; ++c) {
    const std::string prefix = "nvme" + std::to_string(c);
    CHECK(apply_param_settings(prefix, settings, p[c], p[c].engine) == (c == 0 ? 5u : 5u));
    p[c].resolve_auto();
    platform::Config config;
    for (const std::string& s : settings)
      if (s.compare(0, prefix.size() + 1, prefix + ".") == 0) {
        const size_t eq = s.find('=');
        config.set("nvme." + s.substr(prefix.size() + 1, eq - prefix.size() - 1), s.substr(eq + 1));
      }
    auto app = platform::load_params<NvmeControllerModel::Params>(config);
    app.engine = platform::load_params<NvmeHwEngineParams>(config);
    app.resolve_auto();
    CHECK(record(p[c]) == record(app));
    CHECK(record(p[c].engine) == record(app.engine));
  }
  CHECK(p[0].firmware.mqes == 63);
  CHECK(p[0].firmware.mdts == 2);
  CHECK(p[0].backend.kind == BackendKind::Ram);
  CHECK(p[0].engine.clock_ghz == 0.5);
  CHECK(p[1].firmware.mqes == 15);
  CHECK(p[1].backend.latency == sc_core::sc_time(20, sc_core::SC_US));
  CHECK(p[1].firmware.cq_eventidx == fw::EventIdxPolicy::Never);
  CHECK(p[1].firmware.namespace_lbas == (1ull << 30) / 4096);
  CHECK(p[1].engine.clock_ghz == 1);  // nvme0's clock left it alone
}

TEST_CASE("param settings: an unknown name, an unreadable or out-of-range value is refused by name",
          "[param_settings]") {
  NvmeControllerModel::Params p;
  auto refused = [&](const std::string& s) {
    try {
      apply_param_settings("nvme0", {s}, p, p.engine);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused("nvme0.mqes=0") == "nvme0.mqes=0: 0 is out of range (1..65535 in base units: ns, bytes)");
  CHECK(refused("nvme0.mqes=lots") == "nvme0.mqes=lots: cannot read \"lots\"");
  CHECK(refused("nvme0.backend=tape") == "nvme0.backend=tape: cannot read \"tape\"");
  CHECK(refused("nvme0.backend_latency=2s") ==
        "nvme0.backend_latency=2s: 2s is out of range (0..1000000000 in base units: ns, bytes)");
  CHECK(refused("nvme0.queues=4") == "nvme0.queues=4: no parameter nvme0.queues");
  CHECK(refused("nvme0.mqes") == "nvme0.mqes: not name=value");
  CHECK(refused("nvme1.mqes=0") == "accepted");  // another instance's: not this one's to read
  CHECK(p.firmware.mqes == 4095);                // nothing refused was applied
}
