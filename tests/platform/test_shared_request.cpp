// Several device threads over the ram backend, through the binary: a
// thread's data transfer lets another thread run in the middle of it, and
// neither may lose or mix up the other's command (the firmware's request
// is one scratch; each thread hands the backend its own copy).
#include <catch2/catch.hpp>

#include "run_binary.h"

using nvmesim::test::json_number;
using nvmesim::test::run_nvmesim;

TEST_CASE("iothreads over the ram backend: every command completes, data intact", "[e2e][ram]") {
  const char* rows[] = {
      "--hv.iothreads=2 --numjobs=2",
      "--hv.iothreads=4 --numjobs=4",
      "--hv.iothreads=4 --numjobs=4 --pcie.mode=link",
      "--hv.iothreads=4 --numjobs=4 --pcie.mode=link --pcie.gen=1 --pcie.lanes=1",
  };
  for (const char* row : rows) {
    const std::string args = std::string(row) +
                             " --hv.device_thread=iothread --nvme.backend=ram --bs=128k --rw=randrw "
                             "--verify=pattern --do_verify=off --number_ios=200 --output-format=json";
    INFO("nvmesim " << args);
    const auto r = run_nvmesim(args);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("\"outcome\": \"ok\"") != std::string::npos);
    const double jobs = std::stod(std::string(row).substr(std::string(row).find("numjobs=") + 8));
    CHECK(json_number(r.out, "ios") == 200 * jobs);
    CHECK(json_number(r.out, "io_errors") == 0);
    CHECK(json_number(r.out.substr(r.out.find("\"verify\"")), "errors") == 0);
  }
}
