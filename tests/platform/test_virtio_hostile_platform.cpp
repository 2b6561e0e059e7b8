// Hostile guest input in a whole-system virtio-blk run (guest.virtio_fault):
// one request on virtqueue 0 is published malformed; the device answers as
// QEMU's hw/virtio/virtio.c virtqueue_split_pop does (virtio_error: broken,
// DEVICE_NEEDS_RESET, no queue processed any more), the guest's virtio_blk
// waits for its requests (Linux 6.1 sets no blk-mq timeout handler), and the
// run ends reporting it: outcome device_needs_reset, the I/Os that could not
// complete counted, exit status 0, the same output for the same seed.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "nvmesim/firmware/virtio/virtio_spec.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/report/results.h"
#include "nvmesim/platform/system/system.h"
#include "tests/platform/run_binary.h"
#include "tests/platform/virtio_config.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

using test::Settings;

RunResults run(const Settings& settings) {
  const Config c = test::virtio_config(settings);
  System sys(c);
  return sys.run();
}

// iodepth 1, the 11th request malformed: exactly 10 complete, 1 never does.
// indirect: virtio.indirect_desc (the request's descriptors in a table or in the ring).
void check_fault(const char* fault, const std::string& error, const char* indirect = "on") {
  const RunResults r = run({{"iodepth", "1"}, {"number_ios", "100"}, {"guest.virtio_fault", fault},
                            {"guest.virtio_fault_after", "10"}, {"virtio.indirect_desc", indirect}});
  REQUIRE(r.bringup_ok);
  CHECK(r.virtio);
  CHECK(r.device_needs_reset);
  CHECK_FALSE(r.stalled);
  CHECK(r.device_error == error);
  CHECK(r.count("ios") == 10);
  CHECK(r.unfinished_ios == 1);
  CHECK(r.count("io_errors") == 0);
  // ACKNOWLEDGE | DRIVER | FEATURES_OK | DRIVER_OK | DEVICE_NEEDS_RESET
  CHECK(unsigned(r.virtio_status) == (1u | 2u | 4u | 8u | 64u));
  CHECK(std::string(run_outcome(r)) == "device_needs_reset");
  CHECK(r.stats.at("virtio_blk.errors") == 1);
  CHECK(r.stats.at("virtio_blk.requests") == 10);
  CHECK(r.stats.at("virtio_blk.interrupts") == r.count("controller.interrupts"));
  CHECK(r.stats.at("virtio_blk.backend.completed") == 10);
}

}  // namespace

TEST_CASE("virtio hostile run: a looped descriptor chain breaks the device, 10 of 11 I/Os complete") {
  check_fault("desc_loop", "Looped descriptor");
}

TEST_CASE("virtio hostile run: desc_loop with the chain in the ring (virtio.indirect_desc=off)") {
  check_fault("desc_loop", "Looped descriptor", "off");
}

TEST_CASE("virtio hostile run: an avail ring head out of range breaks the device") {
  check_fault("head_out_of_range", "Guest says index 256 is available");
}

TEST_CASE("virtio hostile run: head_out_of_range with the chain in the ring (virtio.indirect_desc=off)") {
  check_fault("head_out_of_range", "Guest says index 256 is available", "off");
}

TEST_CASE("virtio hostile run: a next index out of range breaks the device") {
  check_fault("next_out_of_range", "Desc next is 3");  // past the 3-entry indirect table
}

TEST_CASE("virtio hostile run: next_out_of_range with the chain in the ring (virtio.indirect_desc=off)") {
  check_fault("next_out_of_range", "Desc next is 256", "off");
}

TEST_CASE("virtio hostile run: a buffer outside guest memory breaks the device") {
  check_fault("buffer_outside_memory", "virtio: bogus descriptor or out of resources");
}

TEST_CASE("virtio hostile run: buffer_outside_memory with the chain in the ring (virtio.indirect_desc=off)") {
  check_fault("buffer_outside_memory", "virtio: bogus descriptor or out of resources", "off");
}

TEST_CASE("virtio hostile run: a zero-length buffer breaks the device") {
  check_fault("zero_length", "virtio: zero sized buffers are not allowed");
}

TEST_CASE("virtio hostile run: zero_length with the chain in the ring (virtio.indirect_desc=off)") {
  check_fault("zero_length", "virtio: zero sized buffers are not allowed", "off");
}

TEST_CASE("virtio hostile run: an indirect table of 40 bytes breaks the device") {
  check_fault("indirect_bad_length", "Invalid size for indirect buffer table");
}

TEST_CASE("virtio hostile run: a table inside an indirect table breaks the device") {
  check_fault("indirect_nested", "Nested indirect descriptor");
}

TEST_CASE("virtio hostile run: the broken device stops every queue, each job's I/Os in flight are counted") {
  // Two jobs, iodepth 4: queue 0's 21st request is malformed. Every request
  // either completed or is still in flight (iodepth of each job stays full).
  const RunResults r = run({{"numjobs", "2"}, {"iodepth", "4"}, {"number_ios", "1000"},
                            {"guest.virtio_fault", "desc_loop"}, {"guest.virtio_fault_after", "20"}});
  REQUIRE(r.bringup_ok);
  CHECK(r.device_needs_reset);
  CHECK(r.unfinished_ios == 8);
  CHECK(r.count("ios") < 2000);
  CHECK(r.stats.at("virtio_blk.errors") == 1);
  // Each completed I/O was a used entry the device pushed before it broke.
  CHECK(r.stats.at("virtio_driver.vq0.completions") + r.stats.at("virtio_driver.vq1.completions") == r.count("ios"));
  CHECK(r.stats.at("virtio_blk.interrupts") + r.stats.at("virtio_blk.interrupts_suppressed") == r.count("ios"));
}

TEST_CASE("virtio hostile run: the binary exits 0, reports needs_reset in JSON, same seed same bytes") {
  const std::string args =
      "--device=virtio-blk --virtio.backend=null --iodepth=1 --number_ios=50 --guest.virtio_fault=desc_loop "
      "--guest.virtio_fault_after=7 --output-format=json";
  const test::ProcessResult a = test::run_nvmesim(args);
  const test::ProcessResult b = test::run_nvmesim(args);
  CHECK(a.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("\"outcome\": \"device_needs_reset\"") != std::string::npos);
  CHECK(a.out.find("\"needs_reset\": true") != std::string::npos);
  CHECK(a.out.find("\"error\": \"Looped descriptor\"") != std::string::npos);
  CHECK(test::json_number(a.out, "unfinished_ios") == 1);
  CHECK(test::json_number(a.out, "device_status") == 79);
}

TEST_CASE("virtio hostile run: bad guest.virtio_fault values are refused naming the field") {
  test::check_refused("--device=virtio-blk --guest.virtio_fault=bogus",
                      "nvmesim: error: --guest.virtio_fault: 'bogus' is not one of none, desc_loop, "
                      "head_out_of_range, next_out_of_range, buffer_outside_memory, zero_length, indirect_bad_length, "
                      "indirect_nested");
  test::check_refused("--guest.virtio_fault=desc_loop",
                      "nvmesim: error: --guest.virtio_fault: desc_loop needs device virtio-blk (it is nvme: the fault is in "
                      "a virtqueue)");
}
