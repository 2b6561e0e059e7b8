// nvmesim validate: the band rules, the reference reader, and the command
// through the binary on small hand-made references.
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/validate/reference_csv.h"
#include "nvmesim/platform/validate/validate.h"
#include "tests/platform/run_binary.h"
#include "tests/platform/temp_file.h"

using namespace nvmesim::platform;
using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;
using nvmesim::test::TempFile;

namespace {

const std::string kHeader =
    "qemu_version,linux_version,fio_version,accel,rw,bs,iodepth,numjobs,dbbuf,ioeventfd,repeats,ios,iops,"
    "iops_min,iops_max,clat_p50_ns,clat_p99_ns,sq_updates_per_io,cq_updates_per_io,sq_mmio_per_io,"
    "sq_mmio_per_io_min,sq_mmio_per_io_max,cq_mmio_per_io,cq_mmio_per_io_min,cq_mmio_per_io_max,irq_per_io,"
    "irq_per_io_min,irq_per_io_max,qemu_sq_mmio_per_io,qemu_cq_mmio_per_io,dbbuf_config_seen\n";

// One row: the configuration and the figures validate reads.
std::string row(const std::string& rw, int depth, const std::string& dbbuf, double iops, double sq, double cq,
                const std::string& sq_range = ",") {
  return "7.2,6.1,3.33,tcg," + rw + ",4096," + std::to_string(depth) + ",1," + dbbuf + ",off,1,1000," +
         std::to_string(iops) + ",,,,,1,1," + std::to_string(sq) + "," + sq_range + "," + std::to_string(cq) +
         ",,,1,,,,,0\n";
}

}  // namespace

TEST_CASE("validate: doorbell writes per I/O are in band within 0.15 or inside the measured range") {
  const double nan = std::nan("");
  struct Case {
    double model, reference, lo, hi;
    bool in;
  } cases[] = {
      {1.00, 1.00, nan, nan, true},   {0.65, 0.50, nan, nan, true},  // exactly 0.15 away
      {0.66, 0.50, nan, nan, false},  {0.34, 0.50, nan, nan, false},
      {0.80, 0.50, 0.40, 0.90, true},  // outside 0.15, inside min..max
      {0.95, 0.50, 0.40, 0.90, false}, {0.30, 0.50, 0.40, nan, false},  // half a range: not a range
  };
  for (const Case& c : cases) {
    INFO("model " << c.model << " reference " << c.reference << " range " << c.lo << ".." << c.hi);
    CHECK(doorbell_in_band(c.model, c.reference, c.lo, c.hi) == c.in);
  }
}

TEST_CASE("validate: an IOPS ratio is in band within 25% of the reference's") {
  struct Case {
    double model, reference;
    bool in;
  } cases[] = {{1.0, 1.0, true}, {1.25, 1.0, true}, {1.26, 1.0, false}, {3.0, 4.0, true},
               {2.9, 4.0, false}, {1.0, 0.0, false}};
  for (const Case& c : cases) {
    INFO("model " << c.model << " reference " << c.reference);
    CHECK(iops_ratio_in_band(c.model, c.reference) == c.in);
  }
}

TEST_CASE("validate: the reference reader takes the columns and refuses bad files by line and column") {
  TempFile good(kHeader + row("randread", 1, "off", 20000, 1, 1) + row("read", 8, "on", 50000, 0.25, 0.5, "0.2,0.3"));
  const auto rows = read_reference_csv(good.path);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].line == 2);
  CHECK(rows[0].label() == "rw=randread bs=4096 iodepth=1 numjobs=1 dbbuf=off ioeventfd=off");
  CHECK(std::isnan(rows[0].sq_mmio_min));
  CHECK(rows[1].iodepth == 8);
  CHECK(rows[1].dbbuf);
  CHECK(rows[1].sq_mmio == Approx(0.25));
  CHECK(rows[1].sq_mmio_min == Approx(0.2));
  CHECK(rows[1].sq_mmio_max == Approx(0.3));
  CHECK(rows[1].accel == "tcg");

  struct Bad {
    std::string text, message;
  } bad[] = {
      {"rw,bs\nread,4096\n", " line 1: no column 'iodepth'"},
      {kHeader + row("randrw", 1, "off", 1, 1, 1), " line 2: column rw: 'randrw' is not one of read, randread, write, randwrite"},
      {kHeader + row("read", 0, "off", 1, 1, 1), " line 2: column iodepth: must be 1..4095"},
      {kHeader + row("read", 1, "maybe", 1, 1, 1), " line 2: column dbbuf: 'maybe' is not one of on, off"},
      {kHeader + row("read", 1, "off", 1, 1, 1) + row("read", 1, "off", 1, 1, 1),
       " line 3: the configuration rw=read bs=4096 iodepth=1 numjobs=1 dbbuf=off ioeventfd=off appears twice"},
      {kHeader, ": no rows after the header"},
  };
  for (const Bad& b : bad) {
    TempFile f(b.text);
    INFO(b.text);
    try {
      read_reference_csv(f.path);
      FAIL("accepted");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()) == f.path + b.message);
    }
  }
}

TEST_CASE("validate: each row runs at its configuration and the share counts the rows in band") {
  // QD1 without the doorbell buffer rings once per I/O both ways in any
  // model; the QD8 row's reference is far from any model (SQ 0.0 with the
  // buffer off cannot be), so it is out of band.
  TempFile ref(kHeader + row("randread", 1, "off", 20000, 1, 1) + row("randread", 8, "off", 60000, 0.0, 0.5));
  const auto r = run_nvmesim("validate " + ref.path + " --no-calibrate --number_ios=2000 --output-format=json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 2);
  const auto& qd1 = j["rows"][0];
  CHECK(qd1["config"]["iodepth"] == 1);
  CHECK(qd1["model"]["per_io.sq_mmio"] == 1.0);
  CHECK(qd1["model"]["per_io.cq_mmio"] == 1.0);
  CHECK(qd1["model"]["iops_ratio"] == 1.0);
  CHECK(qd1["in_band"] == true);
  const auto& qd8 = j["rows"][1];
  CHECK(qd8["model"]["per_io.sq_mmio"].get<double>() == 1.0);  // no buffer: every update is a write
  CHECK(qd8["in_band_by_metric"]["per_io.sq_mmio"] == false);
  CHECK(qd8["in_band"] == false);
  CHECK(qd8["reference"]["iops_ratio"] == 3.0);
  CHECK(j["in_band_share"] == 0.5);
  CHECK(j["calibration"].empty());
}

TEST_CASE("validate: a calibrated cost makes the model's iodepth=1 IOPS the reference's") {
  TempFile ref(kHeader + row("randread", 1, "off", 20000, 1, 1) + row("randread", 1, "on", 22000, 1, 1) +
               row("randread", 4, "on", 50000, 0.5, 0.5));
  const auto r = run_nvmesim("validate " + ref.path +
                             " --calibrate guest.submit_cost --number_ios=1000 --output-format=json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["calibration"].size() == 1);
  const auto& c = j["calibration"][0];
  CHECK(c["parameter"] == "guest.submit_cost");
  CHECK(c["matched_rows"] == 2);
  CHECK(c["reference"] == 42000.0);
  CHECK(c["converged"] == true);
  CHECK(std::abs(c["model"].get<double>() - 42000.0) <= 0.05 * 42000.0);
  // The fitted value is what the rows ran with: their IOPS sum is the fit's.
  const double sum = j["rows"][0]["model"]["iops"].get<double>() + j["rows"][1]["model"]["iops"].get<double>();
  CHECK(sum == Approx(c["model"].get<double>()).epsilon(1e-4));
}

TEST_CASE("validate: bad options and references are refused with one line") {
  TempFile ref(kHeader + row("randread", 1, "off", 20000, 1, 1) + row("randread", 8, "off", 60000, 1, 0.5));
  TempFile no_qd1(kHeader + row("randread", 8, "off", 60000, 1, 0.5));
  const std::string p = ref.path;
  check_refused("validate", "nvmesim validate: error: no reference file (e.g. validation/qemu/results.csv)");
  check_refused("validate /nonexistent.csv",
                "nvmesim validate: error: /nonexistent.csv: cannot open (No such file or directory)");
  check_refused("validate " + p + " --preset nosuch",
                "nvmesim validate: error: --preset: 'nosuch' is not one of haswell-ep, ivybridge-i7, qemu-7.2, qemu-7.1, kvm, tcg");
  check_refused("validate " + p + " --calibrate rw", "nvmesim validate: error: --calibrate: 'rw' is not a time parameter (see --list-params)");
  check_refused("validate " + p + " --calibrate hv.inject --calibrate hv.exit_eoi --calibrate hv.exit_mmio",
                "nvmesim validate: error: --calibrate: at most two costs");
  check_refused("validate " + p + " --calibrate hv.inject@dbbuf=on",
                "nvmesim validate: error: --calibrate: hv.inject@dbbuf=on: no iodepth=1 row of the reference matches");
  check_refused("validate " + p + " --calibrate hv.inject@depth=1",
                "nvmesim validate: error: --calibrate: 'depth' is not one of rw, numjobs, dbbuf, ioeventfd");
  check_refused("validate " + p + " --set iodepth=4",
                "nvmesim validate: error: --set: iodepth is set by each row of the reference (or --number_ios)");
  check_refused("validate " + p + " --set hv.inject=5",
                "nvmesim validate: error: --hv.inject: '5' needs a unit (ns, us, ms, s or cyc)");
  check_refused("validate " + p + " --output-format=csv",
                "nvmesim validate: error: --output-format: 'csv' is not one of normal, json");
  check_refused("validate " + p + " --number_ios=5", "nvmesim validate: error: --number_ios: '5' is out of range (100..10000000)");
  check_refused("validate " + p + " --no-cal", "nvmesim validate: error: unknown option '--no-cal' (see --help)");
  check_refused("validate " + no_qd1.path,
                "nvmesim validate: error: reference line 2: rw=randread bs=4096 iodepth=8 numjobs=1 dbbuf=off "
                "ioeventfd=off has no iodepth=1 row to take its IOPS ratio to");
}

TEST_CASE("validate: a spread calibration fits the model's latency p99 - p50 to the reference's clat") {
  // iodepth 1 rows whose clat spread is 400 us: the varying wake-up delay of
  // the device thread is the only varying time in the model at iodepth 1.
  std::string csv = kHeader;
  for (const char* dbbuf : {"off", "on"})
    csv += "7.2,6.1,3.33,tcg,randread,4096,1,1," + std::string(dbbuf) +
           ",off,1,1000,5000,,,100000,500000,1,1,1,,,1,,,1,,,,,0\n";
  TempFile ref(csv);
  const auto r = run_nvmesim("validate " + ref.path +
                             " --calibrate hv.dispatch_jitter:spread --set hv.wakeup=fixed --number_ios=2000 --output-format=json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["calibration"].size() == 1);
  const auto& c = j["calibration"][0];
  CHECK(c["target"] == "spread");
  CHECK(c["reference"] == 400000.0);
  CHECK(c["converged"] == true);
  CHECK(std::abs(c["model"].get<double>() - 400000.0) <= 0.05 * 400000.0);
  // An exponential delay of mean m has p99 - p50 = m ln 50 (3.91 m).
  CHECK(c["value_ns"].get<double>() == Approx(400000.0 / std::log(50.0)).epsilon(0.15));
  check_refused("validate " + ref.path + " --calibrate hv.dispatch_jitter:median",
                "nvmesim validate: error: --calibrate: target 'median' is not one of iops, spread");
  TempFile no_clat(kHeader + row("randread", 1, "off", 20000, 1, 1));
  check_refused("validate " + no_clat.path + " --calibrate hv.dispatch_jitter:spread",
                "nvmesim validate: error: --calibrate: hv.dispatch_jitter:spread needs clat_p50_ns and "
                "clat_p99_ns (reference line 2)");
}

TEST_CASE("validate: measured wake-up stalls reach each row from the line of its numjobs and dbbuf") {
  TempFile timing(
      "numjobs,dbbuf,ioeventfd,iodepth,runs,wakeups,reaction_p50_ns,stall_share,stall_max_ns\n"
      "1,off,off,1,3,6000,33000,0.0808,5734000\n"
      "1,on,off,1,3,6000,36000,0.25,1000000\n");
  const std::vector<TimingRow> t = read_timing_csv(timing.path);
  REQUIRE(t.size() == 2);
  CHECK(t[0].line == 2);
  CHECK(t[0].numjobs == 1);
  CHECK(t[0].dbbuf == false);
  CHECK(t[0].wakeups == 6000);
  CHECK(t[0].reaction_p50_ns == 33000);
  CHECK(t[0].stall_share == 0.0808);
  CHECK(t[0].stall_max_ns == 5734000);
  CHECK(t[1].dbbuf == true);

  TempFile ref(kHeader + row("randread", 1, "off", 20000, 1, 1) + row("randread", 8, "on", 60000, 0.5, 0.5) +
               row("randread", 1, "on", 20000, 1, 1));
  const std::vector<ReferenceRow> rows = read_reference_csv(ref.path);
  ValidateSetup setup;
  setup.timing_file = timing.path;
  setup.timing = t;
  const Config off = row_config(setup, rows[0]), on = row_config(setup, rows[1]);
  CHECK(off.text("hv.dispatch_stall_share") == "0.0808");
  CHECK(off.time_ns("hv.dispatch_stall_max") == 5734000);
  CHECK(on.text("hv.dispatch_stall_share") == "0.25");
  CHECK(on.time_ns("hv.dispatch_stall_max") == 1000000);
  ValidateSetup none;  // without --timing the platform's default: no stalls
  CHECK(row_config(none, rows[0]).text("hv.dispatch_stall_share") == "0");

  // Through the binary: the stalls reach the run (the model's main loop
  // counts them) and the JSON names what was measured.
  const auto r = run_nvmesim("validate " + ref.path + " --timing " + timing.path +
                             " --no-calibrate --number_ios=1000 --output-format=json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["measured"]["file"] == timing.path);
  REQUIRE(j["measured"]["lines"].size() == 2);
  CHECK(j["measured"]["lines"][1]["hv.dispatch_stall_share"] == 0.25);
  CHECK(j["measured"]["lines"][1]["hv.dispatch_stall_max_ns"] == 1000000.0);
}

// The main loop's CPU time per command and per completion posted, measured
// at iodepth 1 (trace_timing.py's command_p50_ns and post_p50_ns), reach
// the rows as nvme.cmd_cost and nvme.cqe_cost; a file without them sets
// neither (the case above).
TEST_CASE("validate: measured main-loop costs reach each row as nvme.cmd_cost and nvme.cqe_cost") {
  TempFile timing(
      "numjobs,dbbuf,ioeventfd,iodepth,runs,wakeups,reaction_p50_ns,stall_share,stall_max_ns,command_p50_ns,"
      "post_p50_ns\n"
      "1,off,off,1,3,6000,33000,0.01,700000,20000,8000\n"
      "1,on,off,1,3,6000,36000,0.02,800000,27000,10500\n");
  const std::vector<TimingRow> t = read_timing_csv(timing.path);
  REQUIRE(t.size() == 2);
  CHECK(t[1].command_p50_ns == 27000);
  CHECK(t[1].post_p50_ns == 10500);
  const std::vector<MeasuredParam> m = measured_params(t[1]);
  REQUIRE(m.size() == 4);
  CHECK(m[2].name == "nvme.cmd_cost");
  CHECK(m[3].name == "nvme.cqe_cost");

  TempFile ref(kHeader + row("randread", 1, "off", 20000, 1, 1) + row("randread", 1, "on", 20000, 1, 1));
  const std::vector<ReferenceRow> rows = read_reference_csv(ref.path);
  ValidateSetup setup;
  setup.timing_file = timing.path;
  setup.timing = t;
  const Config off = row_config(setup, rows[0]), on = row_config(setup, rows[1]);
  CHECK(off.time_ns("nvme.cmd_cost") == 20000);
  CHECK(off.time_ns("nvme.cqe_cost") == 8000);
  CHECK(on.time_ns("nvme.cmd_cost") == 27000);
  CHECK(on.time_ns("nvme.cqe_cost") == 10500);
  CHECK(row_config(ValidateSetup{}, rows[0]).time_ns("nvme.cmd_cost") == 1000);  // the platform's default

  const auto r = run_nvmesim("validate " + ref.path + " --timing " + timing.path +
                             " --no-calibrate --number_ios=200 --output-format=json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["measured"]["lines"][1]["nvme.cmd_cost_ns"] == 27000.0);
  CHECK(j["measured"]["lines"][1]["nvme.cqe_cost_ns"] == 10500.0);
  const auto text = run_nvmesim("validate " + ref.path + " --timing " + timing.path + " --no-calibrate --number_ios=200");
  CHECK(text.out.find("numjobs=1 dbbuf=on: hv.dispatch_stall_share = 0.0200, hv.dispatch_stall_max = 800us, "
                      "nvme.cmd_cost = 27us, nvme.cqe_cost = 10.5us\n") != std::string::npos);
  check_refused("validate " + ref.path + " --timing " + timing.path + " --set nvme.cqe_cost=1us",
                "nvmesim validate: error: --set: nvme.cqe_cost is measured (--timing " + timing.path +
                    "); it cannot be set");
  TempFile slow("numjobs,dbbuf,ioeventfd,iodepth,runs,wakeups,reaction_p50_ns,stall_share,stall_max_ns,command_p50_ns\n"
                "1,off,off,1,3,6000,33000,0.01,700000,2000000\n");
  check_refused("validate " + ref.path + " --timing " + slow.path,
                "nvmesim validate: error: " + slow.path + " line 2: column command_p50_ns: must be 0..1000000 (1 ms)");
}

TEST_CASE("validate: a bad wake-up timing file is refused by line and column") {
  const std::string head = "numjobs,dbbuf,ioeventfd,iodepth,runs,wakeups,reaction_p50_ns,stall_share,stall_max_ns\n";
  TempFile ref(kHeader + row("randread", 1, "off", 20000, 1, 1) + row("randread", 1, "on", 20000, 1, 1));
  TempFile deep(head + "1,off,off,8,3,6000,33000,0.1,5000000\n");
  TempFile share(head + "1,off,off,1,3,6000,33000,1.5,5000000\n");
  TempFile twice(head + "1,off,off,1,3,6000,33000,0.1,5000000\n1,off,off,1,3,6000,33000,0.2,5000000\n");
  TempFile no_max(head + "1,off,off,1,3,6000,33000,0.1,0\n");
  TempFile no_column("numjobs,dbbuf,iodepth,stall_share\n1,off,1,0.1\n");
  TempFile only_off(head + "1,off,off,1,3,6000,33000,0.1,5000000\n");
  const std::string v = "validate " + ref.path + " --timing ";
  check_refused(v + deep.path, "nvmesim validate: error: " + deep.path +
                                   " line 2: column iodepth: timing is measured at iodepth 1 (allowed 1)");
  check_refused(v + share.path, "nvmesim validate: error: " + share.path + " line 2: column stall_share: must be 0..1");
  check_refused(v + twice.path, "nvmesim validate: error: " + twice.path +
                                    " line 3: numjobs=1 dbbuf=off appears twice (first on line 2)");
  check_refused(v + no_max.path, "nvmesim validate: error: " + no_max.path +
                                     " line 2: column stall_max_ns: is 0 while stall_share is not");
  check_refused(v + no_column.path, "nvmesim validate: error: " + no_column.path + " line 1: no column 'stall_max_ns'");
  check_refused(v + only_off.path, "nvmesim validate: error: --timing: " + only_off.path +
                                       " has no line for numjobs=1 dbbuf=on (reference line 3)");
  check_refused(v + only_off.path + " --set hv.dispatch_stall_max=1ms",
                "nvmesim validate: error: --set: hv.dispatch_stall_max is measured (--timing " + only_off.path +
                    "); it cannot be set");
}
