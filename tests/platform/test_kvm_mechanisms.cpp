// QEMU 7.1 under KVM (--preset qemu-7.1,kvm, with the costs validate fits on
// the shadow doorbell cover letter): the mechanisms that decide its doorbell
// counts, each checked by turning it off.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/platform/run_binary.h"

namespace {

const std::string kFitted = "--preset qemu-7.1,kvm --hv.exit_mmio=5.7us --hv.dispatch_cost=8.5us --single-run "
                            "--number_ios=5000 --output-format=json";

nlohmann::json run(const std::string& args) {
  const auto r = nvmesim::test::run_nvmesim(kFitted + " " + args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

double per_io(const nlohmann::json& j, const char* key) { return std::stod(j["per_io"][key].dump()); }

}  // namespace

TEST_CASE("kvm: with the buffer at iodepth 8 the device catches up within a batch (no convoy)",
          "[kvm][binary]") {
  const auto j = run("--iodepth=8 --nvme.dbbuf=spec");
  // A convoy rings once per batch of 8 (0.125); the pass that starts while
  // the guest still resubmits makes the next submission ring again.
  CHECK(per_io(j, "sq_mmio") > 0.2);
  CHECK(per_io(j, "sq_mmio") < 0.6);
  CHECK(per_io(j, "cq_mmio") < 0.01);  // QEMU 7.1 never writes the CQ EventIdx
}

TEST_CASE("kvm: without the buffer the unfair global lock serializes the I/Os", "[kvm][binary]") {
  const auto unfair = run("--iodepth=4 --nvme.dbbuf=off");
  const auto fair = run("--iodepth=4 --nvme.dbbuf=off --hv.bql_handoff=0ns");
  // Serialized, nearly every completion has its own interrupt and CQ
  // doorbell; with a fair lock the I/Os overlap and completions batch.
  CHECK(per_io(unfair, "cq_mmio") > 0.8);
  CHECK(per_io(fair, "cq_mmio") < 0.75);
  CHECK(unfair["stats"]["bql"]["handoffs"].get<uint64_t>() > 0);
  CHECK(fair["stats"]["bql"]["handoffs"].get<uint64_t>() == 0);
}

TEST_CASE("kvm: with ioeventfd QEMU 7.1 posts each completion with its own interrupt", "[kvm][binary]") {
  const auto each = run("--iodepth=8 --nvme.dbbuf=spec --hv.notify=ioeventfd");
  const auto pass = run("--iodepth=8 --nvme.dbbuf=spec --hv.notify=ioeventfd --nvme.cqe_post=pass");
  CHECK(per_io(each, "interrupts") == Approx(1.0).margin(0.001));
  CHECK(per_io(pass, "interrupts") < 0.9);
}
