// pcie.mode=link: every TLP of a run counted by kind and purpose, per I/O,
// against the counts the PCI Express rules give a 4 KiB transfer
// (firmware/pcie/tlp.h): at MPS 256 and MRRS 512 a read's data is
// 4096 / 256 = 16 posted writes to the host, a write's is 4096 / 512 = 8
// read requests answered by 2 completions each; an SQE fetch is one read
// request and one 64-byte completion; a CQE, an EventIdx entry, an MSI-X
// message and an MMIO doorbell are one posted write each.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "nvmesim/platform/report/metric_labels.h"
#include "nvmesim/platform/report/stats_doc.h"
#include "tests/platform/doc_table.h"
#include "nvmesim/platform/sweep/sweep_plot.h"
#include "run_binary.h"
#include "simulate.h"
#include "text_file.h"

using nvmesim::test::run_nvmesim;
using Json = nlohmann::json;

namespace {

constexpr unsigned kIos = 2000;
// gen3 x4: 8 GT/s * 4 lanes * 128/130 / 8 bits = 3.93846 bytes per ns.
constexpr double kBytesPerNs = 8.0 * 4 * 128.0 / 130.0 / 8.0;

Json run_json(const std::string& args) {
  const std::string all = "--pcie.mode=link --number_ios=" + std::to_string(kIos) + " --output-format=json " + args;
  INFO("nvmesim " << all);
  const auto r = run_nvmesim(all);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

double per_io(const Json& j, const char* purpose, const char* kind) {
  return j["pcie"]["per_io"]["by_purpose"][purpose][kind].get<double>();
}
double doorbell_mmio_per_io(const Json& j) {
  return double(j["doorbells"]["sq"]["mmio"].get<uint64_t>() + j["doorbells"]["cq"]["mmio"].get<uint64_t>()) / kIos;
}

}  // namespace

TEST_CASE("pcie traffic: a 4 KiB read's TLPs without the doorbell buffer", "[pcie]") {
  const Json j = run_json("--nvme.dbbuf=off --rw=randread --bs=4k");
  REQUIRE(j["ios"].get<unsigned>() == kIos);
  CHECK(per_io(j, "data", "mwr") == 16.0);
  CHECK(per_io(j, "data", "mrd") == 0.0);
  CHECK(per_io(j, "data", "wire_bytes") == 16.0 * (256 + 24));
  CHECK(per_io(j, "sqe_fetch", "mrd") == 1.0);
  CHECK(per_io(j, "sqe_fetch", "cpld") == 1.0);
  CHECK(per_io(j, "sqe_fetch", "wire_bytes") == 24 + (64 + 24));
  CHECK(per_io(j, "cqe_write", "mwr") == 1.0);
  CHECK(per_io(j, "prp_list", "tlps") == 0.0);  // one page: PRP1 only
  CHECK(per_io(j, "shadow_read", "tlps") == 0.0);
  CHECK(per_io(j, "eventidx_write", "tlps") == 0.0);
  CHECK(per_io(j, "msix", "mwr") == Approx(j["per_io"]["msix_messages"].get<double>()).margin(1e-6));
  CHECK(per_io(j, "doorbell_mmio", "mwr") == Approx(doorbell_mmio_per_io(j)).margin(1e-6));
  // Every read is one round trip.
  CHECK(j["pcie"]["per_io"]["read_round_trips"].get<double>() == 1.0);
}

TEST_CASE("pcie traffic: the doorbell buffer's reads and writes against the MMIO writes it saves", "[pcie]") {
  const Json off = run_json("--nvme.dbbuf=off");
  const Json on = run_json("--nvme.dbbuf=spec");
  const double shadow_reads = double(on["eventidx"]["shadow_reads"].get<uint64_t>()) / kIos;
  const double eventidx_writes = double(on["eventidx"]["eventidx_writes"].get<uint64_t>()) / kIos;
  CHECK(shadow_reads > 0);
  // Each shadow doorbell read is one 4-byte read: a request and its completion.
  CHECK(per_io(on, "shadow_read", "mrd") == Approx(shadow_reads).margin(1e-6));
  CHECK(per_io(on, "shadow_read", "cpld") == Approx(shadow_reads).margin(1e-6));
  CHECK(per_io(on, "shadow_read", "wire_bytes") == Approx(shadow_reads * (24 + 4 + 24)).margin(1e-3));
  CHECK(per_io(on, "eventidx_write", "mwr") == Approx(eventidx_writes).margin(1e-6));
  CHECK(per_io(on, "doorbell_mmio", "mwr") == Approx(doorbell_mmio_per_io(on)).margin(1e-6));
  CHECK(per_io(on, "doorbell_mmio", "mwr") < per_io(off, "doorbell_mmio", "mwr"));
  // The same command and data TLPs either way.
  for (const char* p : {"sqe_fetch", "cqe_write", "data"})
    CHECK(per_io(on, p, "tlps") == per_io(off, p, "tlps"));
  // Totals are the sums of the purposes.
  for (const Json* j : {&off, &on}) {
    double tlps = 0, wire = 0;
    for (const auto& [name, e] : (*j)["pcie"]["per_io"]["by_purpose"].items()) {
      tlps += e["tlps"].get<double>();
      wire += e["wire_bytes"].get<double>();
      CHECK(e["tlps"].get<double>() ==
            Approx(e["mrd"].get<double>() + e["cpld"].get<double>() + e["mwr"].get<double>()).margin(1e-5));
    }
    CHECK((*j)["pcie"]["per_io"]["tlps"].get<double>() == Approx(tlps).margin(1e-4));
    CHECK((*j)["pcie"]["per_io"]["wire_bytes"].get<double>() == Approx(wire).margin(1e-2));
  }
}

TEST_CASE("pcie traffic: a 4 KiB write's data is read by the device, and the link's time is its bytes", "[pcie]") {
  const Json j = run_json("--nvme.dbbuf=off --rw=randwrite --bs=4k");
  CHECK(per_io(j, "data", "mrd") == 8.0);
  CHECK(per_io(j, "data", "cpld") == 16.0);
  CHECK(per_io(j, "data", "mwr") == 0.0);
  CHECK(j["pcie"]["per_io"]["read_round_trips"].get<double>() == 2.0);  // the SQE, the data
  // Upstream carries the device's read requests and posted writes; its busy
  // time is their wire bytes over the link's bandwidth.
  uint64_t upstream = 0, downstream = 0;
  const Json& tally = j["stats"]["nvme"]["pcie"]["tlp"]["wire_bytes"];
  for (const auto& [sub, bytes] : tally.items()) {
    const bool host = sub.find("_mmio_") != std::string::npos;  // the CPU's accesses go the other way
    const bool completion = sub.size() > 5 && sub.compare(sub.size() - 5, 5, "_cpld") == 0;
    (host != completion ? downstream : upstream) += bytes.get<uint64_t>();
  }
  const double up_ns = j["stats"]["nvme"]["pcie"]["upstream_busy"].get<double>();
  const double down_ns = j["stats"]["nvme"]["pcie"]["downstream_busy"].get<double>();
  CHECK(up_ns == Approx(double(upstream) / kBytesPerNs).epsilon(1e-4));
  CHECK(down_ns == Approx(double(downstream) / kBytesPerNs).epsilon(1e-4));
  const double span = j["utilization"]["span_ns"].get<double>();
  CHECK(j["pcie"]["utilization"]["downstream"].get<double>() == Approx(down_ns / span).margin(1e-6));
  // A read is its round trip (pcie.read_rtt, 700 ns) and its completions'
  // wire time, nothing queued (one thread): the SQE's 88 bytes (22.344 ns)
  // and the data's 16 * 280 bytes (1137.5 ns), a mean of 700 + 579.922.
  CHECK(j["pcie"]["per_io"]["downstream_queueing_ns"].get<double>() == 0.0);
  CHECK(j["pcie"]["read_time_ns_mean"].get<double>() == Approx(700 + (22.344 + 1137.5) / 2).margin(0.001));
}

TEST_CASE("pcie traffic: emulated mode has no link and reports none", "[pcie]") {
  const auto r = run_nvmesim("--number_ios=200 --output-format=json --nvme.dbbuf=off");
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK_FALSE(j.contains("pcie"));
  CHECK_FALSE(j["stats"]["nvme"].contains("pcie"));
}

// docs/metrics.md's rows of the link's statistics are the group's own.
TEST_CASE("pcie traffic: docs/metrics.md lists the link's statistics", "[pcie][stats][docs]") {
  const nvmesim::platform::RunResults r =
      nvmesim::test::simulate({{"pcie.mode", "link"}, {"number_ios", "20"}, {"nvme.dbbuf", "spec"}});
  nvmesim::test::check_documented(r.stats, "nvme.pcie.", "PCIe link statistics: checked by tests/platform/test_pcie_traffic.cpp",
                                  "pcie_stats_table.md");
}

// A sweep may plot the link's figures: their columns are known before any
// point runs, and they carry labels.
TEST_CASE("pcie traffic: sweep columns and plot labels of the link's figures", "[pcie][sweep]") {
  using nvmesim::platform::sweep::check_plot_columns;
  using nvmesim::platform::metric_label;
  using nvmesim::platform::sweep::parse_plot_arg;
  CHECK_NOTHROW(check_plot_columns(parse_plot_arg("y=pcie.per_io.by_purpose.shadow_read.tlps,x=iodepth"), {"iodepth"}));
  CHECK_NOTHROW(check_plot_columns(parse_plot_arg("y=pcie.utilization.upstream,x=iodepth"), {"iodepth"}));
  CHECK_NOTHROW(check_plot_columns(parse_plot_arg("y=pcie.per_io.by_purpose.virtqueue.mrd,x=iodepth"), {"iodepth"}));
  CHECK_THROWS(check_plot_columns(parse_plot_arg("y=pcie.per_io.by_purpose.no_such.tlps,x=iodepth"), {"iodepth"}));
  CHECK(metric_label("pcie.per_io.by_purpose.shadow_read.tlps").label == "PCIe shadow_read TLPs per I/O");
  CHECK(metric_label("pcie.per_io.mwr").label == "PCIe posted writes (MWr) per I/O");
  CHECK(metric_label("pcie.utilization.downstream").label == "PCIe downstream utilisation");
  CHECK(metric_label("pcie.utilization.downstream").unit == "fraction");
}
