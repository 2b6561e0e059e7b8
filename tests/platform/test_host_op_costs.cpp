// Host threads pay for each operation they do (docs/mechanisms.md, "Host
// threads pay for each operation"): under QEMU 7.1 on KVM each MSI is a
// KVM_SIGNAL_MSI ioctl on the main loop that posts the completion, so
// batching the CQEs of a pass under one interrupt (nvme.cqe_post=pass)
// saves the thread one ioctl per interrupt saved.
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/presets.h"
#include "nvmesim/platform/report/stats_doc.h"
#include "tests/platform/doc_table.h"
#include "nvmesim/platform/system/system.h"
#include "run_binary.h"
#include "text_file.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

struct Run {
  uint64_t ios = 0, msis = 0, msi_charged = 0;
  uint64_t msi_time_ps = 0, busy_ps = 0;
};

// Times in the JSON's stats are ns with three decimals: exact picoseconds.
uint64_t ps(const nlohmann::json& v) { return uint64_t(std::llround(v.get<double>() * 1000)); }

// One System per process: each run is the binary's.
Run run_qemu71_kvm(const std::string& cqe_post) {
  const auto r = test::run_nvmesim(
      "--preset qemu-7.1,kvm --single-run --nvme.dbbuf=spec --hv.notify=ioeventfd --iodepth=8 --number_ios=2000 "
      "--output-format=json --nvme.cqe_post=" + cqe_post);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& st = j["stats"];
  Run out;
  out.ios = j["ios"].get<uint64_t>();
  out.msis = st["nvme"]["msix_sent"].get<uint64_t>();
  out.msi_charged = st["nvme"]["host_ops"]["msi"].get<uint64_t>();
  out.msi_time_ps = ps(st["nvme"]["host_ops"]["msi_time"]);
  out.busy_ps = ps(st["mainloop"]["busy_time"]);
  return out;
}

}  // namespace

TEST_CASE("host op costs: under qemu-7.1,kvm batched CQEs cost the main loop one MSI ioctl less per interrupt saved",
          "[host_ops][binary]") {
  const uint64_t ioctl_ps = 2'000'000;  // the kvm preset's hv.msi_ioctl_cost, 2 us
  const Run each = run_qemu71_kvm("each");
  const Run pass = run_qemu71_kvm("pass");
  REQUIRE(each.ios == 2000);
  REQUIRE(pass.ios == 2000);
  // Every message sent was charged once, at the ioctl's cost.
  CHECK(each.msi_charged == each.msis);
  CHECK(pass.msi_charged == pass.msis);
  CHECK(each.msi_time_ps == each.msis * ioctl_ps);
  CHECK(pass.msi_time_ps == pass.msis * ioctl_ps);
  // Per CQE: one interrupt per I/O; batched: fewer, and the thread's MSI
  // time falls by the interrupts saved times the ioctl's cost.
  CHECK(each.msis == each.ios);
  REQUIRE(pass.msis < each.msis);
  CHECK(each.msi_time_ps - pass.msi_time_ps == (each.msis - pass.msis) * ioctl_ps);
  // The device thread spends less per I/O batched.
  CHECK(double(pass.busy_ps) / double(pass.ios) < double(each.busy_ps) / double(each.ios));
}

TEST_CASE("host op costs: without MSI or backend costs the statistics tree has no host_ops group", "[host_ops]") {
  Config c;
  c.set("number_ios", "50");
  c.validate_all();
  System s(c);
  const RunResults r = s.run();
  CHECK(r.stats.group("nvme.host_ops") == nullptr);
}

// docs/metrics.md's host-op table is the group's own rows (the group
// exists only with an MSI or backend cost set, so the main table has none).
TEST_CASE("host op costs: the backend's submission and completion cost each I/O once", "[host_ops][docs]") {
  Config c;
  c.set("number_ios", "300");
  c.set("nvme.backend_submit_cost", "700ns");
  c.set("nvme.backend_complete_cost", "400ns");
  c.validate_all();
  System s(c);
  const RunResults r = s.run();
  REQUIRE(r.count("ios") == 300);
  CHECK(r.stats.at("nvme.host_ops.backend_submits") == 300);
  CHECK(r.stats.at("nvme.host_ops.backend_submit_time") == 300 * 700'000ull);
  CHECK(r.stats.at("nvme.host_ops.backend_completions") == 300);
  CHECK(r.stats.at("nvme.host_ops.backend_completion_time") == 300 * 400'000ull);
  CHECK(r.stats.at("nvme.host_ops.msi_time") == 0);  // hv.msi_ioctl_cost is 0 by default
  test::check_documented(r.stats, "nvme.host_ops.", "host op statistics: checked by tests/platform/test_host_op_costs.cpp",
                         "host_ops_stats_table.md");
}
