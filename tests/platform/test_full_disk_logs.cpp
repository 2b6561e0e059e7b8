// fio's logs on a full file system: the run's report is still printed (on
// standard output, or in --output), the error names the log, and the exit
// status is 5 (results not written whole), never 1; from a job file and
// from the command line, in text and JSON (logs follow one run: a
// comparison with logs is refused before it runs).
// Needs a small tmpfs (root); elsewhere the test says so and checks nothing.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <sys/mount.h>
#include <vector>

#include "tests/platform/run_binary.h"
#include "tests/platform/temp_dir.h"

using nvmesim::test::run_nvmesim;

TEST_CASE("full disk: a fio log that cannot be written leaves the report printed and exits 5",
          "[fio][output][binary]") {
  nvmesim::test::TempDir d("nvmesim_fullfs", "");
  const std::string full = d / "full";
  std::filesystem::create_directories(full);
  if (::mount("tmpfs", full.c_str(), "tmpfs", 0, "size=64k") != 0) {
    WARN("cannot mount a 64 KiB tmpfs here (not root?): the full-disk case is not checked");
    return;
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount(path.c_str()); }
  } unmount{full};
  // 20000 I/Os log about 600 KiB of lat lines: far more than 64 KiB.
  std::ofstream(d / "j.fio") << "[j]\nioengine=libaio\niodepth=4\nrw=randread\nnumber_ios=20000\n"
                             << "write_lat_log=" << full << "/x\n";
  const std::vector<std::string> runs = {
      "--job " + d / "j.fio --nvme.dbbuf=spec",
      "--job " + d / "j.fio --nvme.dbbuf=off --output-format=json",
      "--single-run --number_ios=20000 --write_lat_log=" + full + "/y",
      "--single-run --number_ios=20000 --write_lat_log=" + full + "/z --output-format=json+",
  };
  for (const std::string& args : runs) {
    INFO(args);
    const auto r = run_nvmesim(args);
    CHECK(r.exit_code == 5);
    CHECK((r.out.find("IOPS") != std::string::npos || r.out.find("\"iops\"") != std::string::npos));
    CHECK(r.err.find("fio log") != std::string::npos);
    CHECK(r.err.find(full) != std::string::npos);
    // No temp file of a log is left in the full folder.
    for (const auto& e : std::filesystem::directory_iterator(full))
      CHECK(e.path().filename().string().rfind('.', 0) != 0);
  }
}
