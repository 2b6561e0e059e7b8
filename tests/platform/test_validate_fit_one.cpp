// nvmesim validate --fit-one: exactly one cost fitted per published source,
// and the physical ranges every fitted cost is judged against
// (platform/validate/cost_ranges.*, the table in validation/published/README.md).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/validate/cost_ranges.h"
#include "nvmesim/platform/validate/published.h"
#include "nvmesim/platform/validate/published_csv.h"
#include "tests/platform/run_binary.h"
#include "tests/platform/temp_file.h"

using namespace nvmesim::platform;
using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;
using nvmesim::test::TempFile;

namespace {

const std::string kHeader =
    "source,title,author,date,accel,preset,rw,bs,iodepth,numjobs,dbbuf,ioeventfd,iothread,polling,label,baseline,"
    "iops,mmio_per_io\n";

// A row of source `id` at `depth` with the buffer and ioeventfd as given.
std::string row(const std::string& id, int depth, const std::string& dbbuf, const std::string& ioeventfd,
                const std::string& baseline, const std::string& iops, const std::string& mmio) {
  return id + ",A title,Someone,2022-06-16,kvm,qemu-7.1,randread,4096," + std::to_string(depth) + ",1," + dbbuf + "," +
         ioeventfd + ",off,off,QD" + std::to_string(depth) + "," + baseline + "," + iops + "," + mmio + "\n";
}

// Source "mmio": no buffer, no ioeventfd (every doorbell an MMIO exit to
// QEMU); source "efd": buffer and ioeventfd on.
const std::string kTwoSources = kHeader + row("mmio", 1, "off", "off", "yes", "20000", "2.0") +
                                row("mmio", 2, "off", "off", "no", "30000", "2.0") +
                                row("efd", 1, "on", "on", "yes", "30000", "") +
                                row("efd", 2, "on", "on", "no", "50000", "");

}  // namespace

TEST_CASE("fit-one: a range includes both ends and flags a value just outside either") {
  const CostRange* r = cost_range("hv.exit_ioeventfd");
  REQUIRE(r != nullptr);
  CHECK(r->lo_ns == 900.0);
  CHECK(r->hi_ns == 3500.0);
  CHECK(in_physical_range(*r, 900.0));
  CHECK(in_physical_range(*r, 3500.0));
  CHECK(in_physical_range(*r, 2000.0));
  CHECK_FALSE(in_physical_range(*r, 899.9));
  CHECK_FALSE(in_physical_range(*r, 3500.1));
  CHECK(range_text(*r) == "900ns..3.5us");
  CHECK(range_note("hv.exit_ioeventfd", 3500.0) == "within its physical range 900ns..3.5us");
  CHECK(range_note("hv.exit_ioeventfd", 3500.1) == "outside its physical range 900ns..3.5us");
  CHECK(range_note("hv.exit_mmio", 1999.9) == "outside its physical range 2us..8us");
  CHECK(range_note("hv.exit_mmio", 8000.0) == "within its physical range 2us..8us");
  CHECK(range_note("hv.msi_ioctl_cost", 2000.0) == "no range documented");
  CHECK(range_note("guest.submit_cost", 1500.0) == "no range documented");
}

TEST_CASE("fit-one: every range names a time parameter once, with lo < hi and a source, and the README prints it") {
  std::ifstream in(NVMESIM_SOURCE_DIR "/validation/published/README.md");
  std::stringstream readme;
  readme << in.rdbuf();
  std::set<std::string> seen;
  for (const CostRange& r : cost_ranges()) {
    INFO(r.param);
    const ParamSpec* spec = ParamRegistry::builtin().find(r.param);
    REQUIRE(spec != nullptr);
    CHECK(spec->kind == ParamKind::Time);
    CHECK(seen.insert(r.param).second);
    CHECK(r.lo_ns > 0);
    CHECK(r.lo_ns < r.hi_ns);
    CHECK(std::string(r.source).size() > 10);
    // The docs' table row: | `param` | lo..hi | ...
    CHECK(readme.str().find("| `" + std::string(r.param) + "` | " + range_text(r) + " |") != std::string::npos);
  }
}

TEST_CASE("fit-one: exit is the baseline's doorbell exit, any other value is the parameter") {
  TempFile f(kTwoSources);
  const auto sources = read_published_csv(f.path);
  REQUIRE(sources.size() == 2);
  CHECK(fit_one_param("exit", sources[0]) == "hv.exit_mmio");
  CHECK(fit_one_param("exit", sources[1]) == "hv.exit_ioeventfd");
  CHECK(fit_one_param("hv.dispatch_cost", sources[1]) == "hv.dispatch_cost");
  PublishedSetup setup;
  setup.fit_one = "exit";
  setup.calibrations = {parse_calibration("hv.inject")};  // the CLI refuses both; --fit-one wins here
  const auto cal = source_calibrations(setup, sources[1]);
  REQUIRE(cal.size() == 1);
  CHECK(cal[0].param == "hv.exit_ioeventfd");
  CHECK_NOTHROW(check_fit_one("exit"));
  CHECK_NOTHROW(check_fit_one("nvme.cmd_cost"));
  CHECK_THROWS_AS(check_fit_one("hv.exit_mmio:spread"), ConfigError);
  CHECK_THROWS_AS(check_fit_one(""), ConfigError);
}

TEST_CASE("fit-one: bad values and combinations are refused with one line") {
  TempFile figures(kTwoSources);
  const std::string p = figures.path;
  const std::string allowed = " is not one of exit (each source's doorbell exit) or a time parameter (see --list-params)";
  check_refused("validate " + p + " --fit-one rw", "nvmesim validate: error: --fit-one: 'rw'" + allowed);
  check_refused("validate " + p + " --fit-one Exit", "nvmesim validate: error: --fit-one: 'Exit'" + allowed);
  check_refused("validate " + p + " --fit-one hv.exit_mmio:spread",
                "nvmesim validate: error: --fit-one: 'hv.exit_mmio:spread'" + allowed);
  check_refused("validate " + p + " --fit-one exit --fit-one hv.exit_mmio",
                "nvmesim validate: error: --fit-one: one cost per source, given 2 times");
  check_refused("validate " + p + " --fit-one exit --calibrate hv.dispatch_cost",
                "nvmesim validate: error: --fit-one: conflicts with --calibrate");
  check_refused("validate " + p + " --fit-one exit --no-calibrate",
                "nvmesim validate: error: --fit-one: conflicts with --no-calibrate");
  check_refused("validate " + p + " --fit-one hv.exit_mmio --set hv.exit_mmio=3us",
                "nvmesim validate: error: --set: hv.exit_mmio is calibrated; it cannot be set");
  TempFile reference("rw,bs,iodepth,numjobs,dbbuf,ioeventfd,iops,sq_mmio_per_io,cq_mmio_per_io\n"
                     "randread,4096,1,1,off,off,20000,1,1\n");
  check_refused("validate " + reference.path + " --fit-one exit",
                "nvmesim validate: error: --fit-one: applies to published figures (validation/published/figures.csv), "
                "not to the real-system reference");
}

TEST_CASE("fit-one: a tiny table fits exactly one cost per source and prints it with its range") {
  TempFile figures(kTwoSources);
  const auto r = run_nvmesim("validate " + figures.path + " --fit-one exit --number_ios=200 --output-format=json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["fit_one"] == "exit");
  REQUIRE(j["sources"].size() == 2);
  const char* expected[] = {"hv.exit_mmio", "hv.exit_ioeventfd"};
  for (size_t k = 0; k < 2; ++k) {
    const auto& s = j["sources"][k];
    INFO(s["source"]);
    REQUIRE(s["calibration"].size() == 1);
    const auto& c = s["calibration"][0];
    CHECK(c["parameter"] == expected[k]);
    CHECK(c["matched_rows"] == 1);
    const CostRange* range = cost_range(expected[k]);
    REQUIRE(range != nullptr);
    CHECK(c["physical_range"]["lo_ns"] == range->lo_ns);
    CHECK(c["physical_range"]["hi_ns"] == range->hi_ns);
    const double value = c["value_ns"].get<double>();
    CHECK(c["in_physical_range"] == (value >= range->lo_ns && value <= range->hi_ns));
    CHECK(c["range_note"] == range_note(expected[k], value));
  }

  const auto text = run_nvmesim("validate " + figures.path + " --fit-one exit --number_ios=200");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("fitted: exactly one cost per source on its baseline rows' IOPS (--fit-one exit") !=
        std::string::npos);
  for (const char* source : {"\nsource mmio: in band: ", "\nsource efd: in band: "}) {
    const size_t at = text.out.find(source);
    REQUIRE(at != std::string::npos);
    const std::string line = text.out.substr(at + 1, text.out.find('\n', at + 1) - at - 1);
    INFO(line);
    CHECK(line.find("; fitted hv.exit_") != std::string::npos);
    CHECK(line.find(", ") == std::string::npos);  // one cost only
    CHECK(line.find("physical range") != std::string::npos);
  }
  // The calibrated line of each source carries the same note.
  CHECK(text.out.find("baseline row(s): hv.exit_mmio = ") != std::string::npos);
  CHECK(text.out.find("baseline row(s): hv.exit_ioeventfd = ") != std::string::npos);
}

TEST_CASE("fit-one: a cost without a documented range says so in the report") {
  TempFile figures(kHeader + row("mmio", 1, "off", "off", "yes", "20000", "2.0"));
  const auto r = run_nvmesim("validate " + figures.path + " --calibrate guest.submit_cost --number_ios=200");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("; fitted guest.submit_cost = ") != std::string::npos);
  CHECK(r.out.find("(no range documented)") != std::string::npos);
}
