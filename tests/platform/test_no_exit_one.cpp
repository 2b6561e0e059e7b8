// Exit 1 is for the program's own bugs only (platform/cli/exit_codes.h):
// every refusal path reachable from input, of every subcommand, ends in its
// own status (2 for usage and configuration), never 1. Generated: for each
// subcommand, bad options, bad values, missing, empty and garbage files,
// and input files that pass their format's check but not the model's.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "tests/platform/run_binary.h"
#include "tests/platform/temp_dir.h"
#include "tests/platform/text_file.h"

using nvmesim::test::run_nvmesim;

namespace {

// The reference CSV's header and first row, with `column` set to `value`.
std::string reference_with(const std::string& csv_path, const std::string& column, const std::string& value) {
  const std::string text = nvmesim::test::slurp(csv_path);
  const size_t h = text.find('\n'), r = text.find('\n', h + 1);
  const std::string header = text.substr(0, h), row = text.substr(h + 1, r - h - 1);
  std::vector<std::string> names, cells;
  auto split = [](const std::string& line, std::vector<std::string>& out) {
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) {
        out.push_back(cell);
        cell.clear();
      } else {
        cell += c;
      }
    }
    out.push_back(cell);
  };
  split(header, names);
  split(row, cells);
  std::string joined;
  for (size_t i = 0; i < names.size() && i < cells.size(); ++i)
    joined += (i ? "," : "") + (names[i] == column ? value : cells[i]);
  return header + "\n" + joined + "\n";
}

}  // namespace

TEST_CASE("no exit 1: every refusal reachable from input ends in its own status, for every subcommand",
          "[cli][input][binary]") {
  nvmesim::test::TempDir d("nvmesim_noexit1", "");
  const std::string src = NVMESIM_SOURCE_DIR;
  std::ofstream(d / "empty.txt") << "";
  std::ofstream(d / "garbage.txt") << "\x01\x02[[[=== ,,,\"\n\xff\xfe";
  std::ofstream(d / "header.csv") << nvmesim::test::slurp(src + "/validation/qemu/results.csv").substr(
      0, nvmesim::test::slurp(src + "/validation/qemu/results.csv").find('\n') + 1);
  const std::string ref = src + "/validation/qemu/results.csv";
  std::ofstream(d / "deep.csv") << reference_with(ref, "iodepth", "2000");
  std::ofstream(d / "bigbs.csv") << reference_with(ref, "bs", "4194304");
  std::ofstream(d / "zero.csv") << reference_with(ref, "iops", "0");
  const std::string pub = src + "/validation/published/figures.csv";
  std::ofstream(d / "pubzero.csv") << reference_with(pub, "iops", "0");
  std::ofstream(d / "pubzerolat.csv") << reference_with(pub, "lat_p99_ns", "0");
  {
    const std::string text = nvmesim::test::slurp(ref);
    const size_t h = text.find(',');
    std::ofstream(d / "dupcol.csv") << text.substr(0, h) << "," << text.substr(0, text.find('\n')).substr(0, h)
                                    << text.substr(h, text.find('\n') - h) << "\n";
  }
  std::ofstream(d / "tl.json") << "{\"traceEvents\": 5}";
  std::ofstream(d / "bad.ini") << "[hv]\nexit_mmio = fast\n";
  std::ofstream(d / "bad.fio") << "[j]\nrw=sideways\n";
  std::ofstream(d / "sweep.txt") << "--grid nope=1,2\n";
  const std::vector<std::string> cases = {
      // the run
      "--bogus", "--iodepth", "--iodepth=abc", "--iodepth=0", "--rw=sideways", "--output-format=xml",
      "--preset nope", "--seed=-1", "--number_ios=0 --runtime=0", "--config " + d / "missing.ini",
      "--config " + d / "garbage.txt", "--config " + d / "bad.ini", "--job " + d / "missing.fio",
      "--job " + d / "garbage.txt", "--job " + d / "bad.fio", "--job " + d / "empty.txt",
      "--single-run --bsrange=4k-128k --size=64k", "--single-run --bssplit=4k/60:8k/60",
      "--single-run --numjobs=8 --nvme.max_io_queues=4", "--single-run --iodepth=5000",
      // eventidx
      "eventidx", "eventidx --bogus", "eventidx --qsize 0 --old 1 --new 2 --eventidx 3",
      "eventidx --qsize 4 --old 9 --new 1 --eventidx 0", "eventidx --qsize abc --exhaustive",
      // sweep
      "sweep", "sweep --grid", "sweep --grid iodepth= --out " + d / "s1", "sweep --grid nope=1,2 --out " + d / "s2",
      "sweep --grid iodepth=1,2", "sweep --merge " + d / "missing" + " --out " + d / "s3",
      "sweep --sweep-file " + d / "garbage.txt" + " --out " + d / "s4",
      "sweep --sweep-file " + d / "sweep.txt" + " --out " + d / "s5",
      // scenario
      "scenario nope", "scenario --bogus", "scenario qemu-vendor --set nope=1",
      "scenario qemu-vendor --calibrate=nope",
      // validate
      "validate", "validate " + d / "missing.csv", "validate " + d / "garbage.txt", "validate " + d / "empty.txt",
      "validate " + d / "header.csv", "validate " + d / "deep.csv", "validate " + d / "bigbs.csv",
      "validate " + d / "zero.csv", "validate " + d / "pubzero.csv", "validate " + d / "pubzerolat.csv",
      "validate " + d / "dupcol.csv",
      // verify
      "verify --bogus", "verify --guest.dbbuf_full_barrier=maybe", "verify --vcd " + d / "missing/x.vcd",
      // timeline-html
      "timeline-html", "timeline-html " + d / "missing.json " + d / "o.html",
      "timeline-html " + d / "garbage.txt " + d / "o.html", "timeline-html " + d / "tl.json " + d / "o.html",
  };
  for (const std::string& args : cases) {
    INFO("nvmesim " << args);
    const auto r = run_nvmesim("--version >/dev/null; timeout -s KILL 60 " NVMESIM_BINARY " " + args);
    INFO(r.err);
    CHECK(r.exit_code != 1);
    CHECK(r.exit_code != 0);
    CHECK(r.exit_code < 128);
    CHECK(!r.err.empty());
  }
}
