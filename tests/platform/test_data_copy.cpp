// Data movement costs time with every backend, through the binary: in
// pcie.mode=emulated each data page is a host memcpy of
// pcie.emulated_access + bytes / pcie.host_copy_gbps (models/pcie/pcie_link.h),
// so one device thread moves at most
//   bs / (pages x emulated_access + bs / host_copy_gbps)   bytes per ns.
#include <catch2/catch.hpp>

#include "run_binary.h"
#include "temp_file.h"

using nvmesim::test::json_number;
using nvmesim::test::run_nvmesim;

namespace {
// Bytes per second one device thread can copy in `bs`-byte I/Os of 4 KiB pages.
double copy_bound(double bs, double gbps, double access_ns = 20) {
  const double pages = bs / 4096;
  return bs / (pages * access_ns + bs / gbps) * 1e9;
}
}  // namespace

TEST_CASE("data copy: bandwidth is bounded by pcie.host_copy_gbps for every backend", "[e2e][copy]") {
  const double bound = copy_bound(131072, 0.1);  // 99.95 MB/s
  for (const char* backend : {"null", "latency", "ram"}) {
    for (const char* rw : {"randread", "randwrite"}) {
      const std::string args = std::string("--pcie.host_copy_gbps=0.1 --bs=128k --number_ios=300 "
                                           "--output-format=json --nvme.backend=") +
                               backend + " --rw=" + rw;
      INFO("nvmesim " << args);
      const auto r = run_nvmesim(args);
      REQUIRE(r.exit_code == 0);
      CHECK(json_number(r.out, "ios") == 300);
      const double bw = json_number(r.out, "bw_bytes");
      CHECK(bw <= bound);
      CHECK(bw >= 0.95 * bound);  // the copy is what limits these runs
    }
  }
}

TEST_CASE("data copy: fio's aio-read example stays under the default copy rate", "[e2e][copy]") {
  // fio's examples/aio-read.fio: four 128k randread jobs at iodepth 4, 32,
  // 8 and 16, served by the one main-loop thread.
  nvmesim::test::TempFile job(
      "[global]\nioengine=libaio\nbuffered=0\nrw=randread\nbs=128k\nsize=512m\n"
      "[file1]\niodepth=4\n[file2]\niodepth=32\n[file3]\niodepth=8\n[file4]\niodepth=16\n");
  const auto r = run_nvmesim("--job " + job.path + " --number_ios=1000 --output-format=json");
  REQUIRE(r.exit_code == 0);
  CHECK(json_number(r.out, "ios") == 4000);
  const double bw = json_number(r.out, "bw_bytes");
  CHECK(bw <= copy_bound(131072, 10));  // 9.53 GB/s at the default 10 GB/s
  CHECK(bw >= 0.5 * copy_bound(131072, 10));
}

TEST_CASE("data copy: device threads share one PCIe link", "[e2e][copy]") {
  // Gen1 x1: 2.5 GT/s x 8b/10b = 250 MB/s a direction; 256-byte payloads
  // (MPS, and completions of 512-byte reads split at MPS) carry 24 bytes of
  // TLP overhead each. Four iothreads cannot move more than the link does.
  const double link = 250e6 * 256 / 280;
  for (const char* backend : {"null", "ram"}) {
    for (const char* rw : {"randread", "randwrite"}) {
      const std::string args =
          std::string("--numjobs=4 --hv.device_thread=iothread --hv.iothreads=4 --pcie.mode=link "
                      "--pcie.gen=1 --pcie.lanes=1 --bs=128k --number_ios=200 --output-format=json "
                      "--nvme.backend=") +
          backend + " --rw=" + rw;
      INFO("nvmesim " << args);
      const auto r = run_nvmesim(args);
      REQUIRE(r.exit_code == 0);
      CHECK(json_number(r.out, "ios") == 800);
      const double bw = json_number(r.out, "bw_bytes");
      CHECK(bw <= link);
      CHECK(bw >= 0.9 * link);
    }
  }
}
