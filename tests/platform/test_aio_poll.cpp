// QEMU's AioContext polling silences notifications (util/aio-posix.c
// poll_set_started; hw/virtio/virtio.c virtio_queue_host_notifier_aio_poll_begin
// and _poll_end): a polling iothread turns its virtqueues' notifications off
// and finds new requests by reading the avail ring; and the NVMe form of
// Jinhao Fan's unmerged "hw/nvme: add polling support" (nvme.sq_poll).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/platform/run_binary.h"

namespace {

const std::string kVirtio = "--device=virtio-blk --hv.notify=ioeventfd --hv.device_thread=iothread "
                            "--number_ios=4000 --output-format=json";

nlohmann::json run(const std::string& args) {
  const auto r = nvmesim::test::run_nvmesim(args + " --preset=none");
  INFO(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

uint64_t u(const nlohmann::json& j) { return j.get<uint64_t>(); }
double kicks_per_io(const nlohmann::json& j) {
  return double(u(j["doorbells"]["sq"]["mmio"])) / double(u(j["ios"]));
}

}  // namespace

TEST_CASE("aio poll: every kick decision is a kick or suppressed, and the device counts each kick", "[aio_poll][binary]") {
  for (const char* eidx : {"on", "off"}) {
    const auto j = run(kVirtio + " --hv.poll_max=50us --virtio.event_idx=" + eidx);
    INFO("event_idx " << eidx);
    const auto& sq = j["doorbells"]["sq"];
    CHECK(u(sq["updates"]) == u(sq["mmio"]) + u(sq["suppressed"]));
    const auto& vb = j["stats"]["virtio_blk"];
    CHECK(u(vb["notifies"]) == u(sq["mmio"]));
    const auto& ap = vb["aio_poll"];
    // One queue: each poll begin is ended before the next; the last may still be open.
    CHECK(u(ap["poll_begins"]) >= u(ap["poll_ends"]));
    CHECK(u(ap["poll_begins"]) <= u(ap["poll_ends"]) + 1);
    CHECK(u(ap["poll_end_found"]) <= u(ap["poll_ends"]));
    CHECK(u(ap["poll_begins"]) > 0);
  }
}

TEST_CASE("aio poll: without polling there are no poll handlers and no aio_poll group", "[aio_poll][binary]") {
  const auto j = run(kVirtio + " --hv.poll_max=0");
  CHECK_FALSE(j["stats"]["virtio_blk"].contains("aio_poll"));
}

// QEMU's adaptive window (adjust_polling_time) grows only while the thread's
// waits are shorter than poll-max-ns; at iodepth 1 the I/O's cycle is about
// 35 us, so a poll_max near it polls for some submissions and sleeps
// through others: the kicks fall through intermediate values.
TEST_CASE("aio poll: kicks per I/O fall with hv.poll_max, through intermediate values", "[aio_poll][binary]") {
  std::vector<double> k;
  for (const char* pm : {"0", "25us", "30us", "35us", "50us"})
    k.push_back(kicks_per_io(run(kVirtio + " --iodepth=1 --number_ios=5000 --virtio.event_idx=off --hv.poll_max=" + pm)));
  CHECK(k[0] == Approx(1.0));  // never polling: the guest kicks every request
  bool between = false;
  for (size_t i = 0; i < k.size(); ++i) {
    INFO("step " << i << ": " << k[i]);
    if (i) CHECK(k[i] <= k[i - 1]);
    if (k[i] > 0.1 && k[i] < 0.9) between = true;
  }
  CHECK(between);
  CHECK(k.back() < 0.1);
}

// nvme.sq_poll (Jinhao Fan's patch): while polled the SQ EventIdx stays where
// poll begin put it, so after the first doorbell the guest skips the rest.
TEST_CASE("nvme.sq_poll: off keeps mainline doorbells and on a polling iothread suppresses SQ doorbells",
          "[aio_poll][binary]") {
  const std::string nvme = "--hv.notify=ioeventfd --hv.device_thread=iothread --nvme.dbbuf=spec "
                           "--number_ios=4000 --iodepth=1 --hv.poll_max=50us --output-format=json";
  const auto off = run(nvme);
  const auto on = run(nvme + " --nvme.sq_poll=on");
  for (const auto* j : {&off, &on}) {
    const auto& sq = (*j)["doorbells"]["sq"];
    CHECK(u(sq["updates"]) == u(sq["mmio"]) + u(sq["suppressed"]));
  }
  CHECK(kicks_per_io(on) < kicks_per_io(off));
}
