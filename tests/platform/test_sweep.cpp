// `nvmesim sweep`: grids and ranges, seeds, the JSON reader, CSV/JSONL
// output, resume, merge, plots and failed points. The process tests run the
// built binary on small points (number_ios=300, ~50 ms each).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "nvmesim/platform/sweep/sweep_grid.h"
#include "nvmesim/platform/sweep/sweep_json.h"
#include "nvmesim/platform/sweep/sweep_output.h"
#include "tests/platform/run_binary.h"
#include "tests/platform/test_sweep_support.h"

using namespace nvmesim::platform::sweep;
using nvmesim::test::Csv;
using nvmesim::test::run_nvmesim;
using nvmesim::test::ScratchDir;
using nvmesim::test::slurp;
using nvmesim::test::text_lines;

namespace {

// FNV-1a 64 as the FNV reference states it: for each octet, hash ^= octet,
// hash *= 2^40 + 2^8 + 0xb3; offset basis 0xcbf29ce484222325.
uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * ((1ull << 40) + (1ull << 8) + 0xb3);
  return h;
}

const std::string kSmall = " --number_ios=300";

}  // namespace

TEST_CASE("sweep grid: lists, ranges with units, grid order", "[sweep]") {
  CHECK(expand_range("hv.exit_mmio", "2000cyc:10000cyc:2000cyc") ==
        std::vector<std::string>{"2000cyc", "4000cyc", "6000cyc", "8000cyc", "10000cyc"});
  // Stop not on a step: the last value is the largest start + k*step <= stop.
  CHECK(expand_range("bs", "4k:17k:4k") == std::vector<std::string>{"4k", "8k", "12k", "16k"});
  CHECK(expand_range("hv.cpu_ghz", "0.5:1.5:0.25") ==
        std::vector<std::string>{"0.5", "0.75", "1", "1.25", "1.5"});
  CHECK(expand_range("iodepth", "3:3:1") == std::vector<std::string>{"3"});
  CHECK_THROWS_WITH(expand_range("hv.exit_mmio", "2us:10000ns:2000ns"),
                    "--grid hv.exit_mmio: start, stop and step need the same unit, got '2us:10000ns:2000ns'");
  CHECK_THROWS_WITH(expand_range("iodepth", "1:8:0"), "--grid iodepth: the step of '1:8:0' must be > 0");
  CHECK_THROWS_WITH(expand_range("iodepth", "8:1:1"), "--grid iodepth: the stop of '8:1:1' is below its start");
  CHECK_THROWS_WITH(parse_grid_arg("nvme.bogus=1,2"), "--grid: unknown parameter 'nvme.bogus' (see --list-params)");
  CHECK_THROWS_WITH(parse_grid_arg("iodepth=1,,2"), "--grid iodepth: empty value in '1,,2'");

  const Axis list = parse_grid_arg("nvme.dbbuf = off, spec");
  CHECK(list.name == "nvme.dbbuf");
  CHECK(list.values == std::vector<std::string>{"off", "spec"});

  const std::vector<Point> pts = expand_grid({{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}}, 7);
  REQUIRE(pts.size() == 6);
  const char* expect[6][2] = {{"1", "x"}, {"1", "y"}, {"1", "z"}, {"2", "x"}, {"2", "y"}, {"2", "z"}};
  for (size_t k = 0; k < 6; ++k) {
    CHECK(pts[k].id == k);
    CHECK(pts[k].values == PointValues{{"a", expect[k][0]}, {"b", expect[k][1]}});
  }
  CHECK_THROWS_AS(expand_grid({{"a", {"1"}}, {"a", {"2"}}}, 1), UsageError);
}

TEST_CASE("sweep seeds: FNV-1a 64 of the sweep seed and the point, shifted right", "[sweep]") {
  REQUIRE(fnv1a64("a") == 0xaf63dc4c8601ec8cull);  // the reference's test vector
  const PointValues v{{"iodepth", "4"}, {"nvme.dbbuf", "spec"}};
  CHECK(point_seed(1, v) == fnv1a64("1\niodepth=4\nnvme.dbbuf=spec") >> 1);
  CHECK(point_seed(2, v) == fnv1a64("2\niodepth=4\nnvme.dbbuf=spec") >> 1);
  CHECK(point_seed(1, v) != point_seed(2, v));
  CHECK(point_seed(1, {{"seed", "42"}, {"iodepth", "4"}}) == 42);  // a seed axis is used as is
  CHECK(expand_grid({{"iodepth", {"4"}}, {"nvme.dbbuf", {"spec"}}}, 1)[0].seed == point_seed(1, v));
}

TEST_CASE("sweep json: parse, write back unchanged, flatten", "[sweep]") {
  const std::string text =
      "{ \"a\": 1.500000, \"b\": [true, false, null, -2e-3], \"s\": \"q\\\"\\\\\\n\\u00e9\\ud83d\\ude00\",\n"
      "  \"o\": {\"99.000000\": 7, \"e\": {}}, \"z\": [] }";
  const Json j = parse_json(text);
  CHECK(to_json(j) ==
        "{\"a\":1.500000,\"b\":[true,false,null,-2e-3],\"s\":\"q\\\"\\\\\\n\xc3\xa9\xf0\x9f\x98\x80\","
        "\"o\":{\"99.000000\":7,\"e\":{}},\"z\":[]}");
  CHECK(to_json(parse_json(to_json(j))) == to_json(j));
  std::vector<std::pair<std::string, std::string>> flat;
  flatten(j, "", flat);
  const std::vector<std::pair<std::string, std::string>> expect{
      {"a", "1.500000"}, {"b.0", "true"}, {"b.1", "false"}, {"b.2", ""}, {"b.3", "-2e-3"},
      {"s", "q\"\\\n\xc3\xa9\xf0\x9f\x98\x80"}, {"o.99.000000", "7"}};
  CHECK(flat == expect);
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "tru", "{} x", "\"a\nb\""})
    CHECK_THROWS_AS(parse_json(bad), JsonError);
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
}

TEST_CASE("sweep: a 2x3 grid gives 6 rows in grid order carrying the values", "[sweep]") {
  ScratchDir d;
  const auto r = run_nvmesim("sweep --grid iodepth=1,4 --grid nvme.dbbuf=off,spec,vendor --jobs 2 --out " +
                             d.path + kSmall);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("sweep: 6 points: 6 run, 0 resumed, 0 failed") != std::string::npos);
  const Csv csv(slurp(d / "results.csv"));
  REQUIRE(csv.rows.size() == 6);
  CHECK(std::vector<std::string>(csv.header.begin(), csv.header.begin() + 5) ==
        std::vector<std::string>{"iodepth", "nvme.dbbuf", "seed", "status", "error"});
  const std::vector<Point> grid = expand_grid({{"iodepth", {"1", "4"}}, {"nvme.dbbuf", {"off", "spec", "vendor"}}}, 1);
  for (size_t k = 0; k < 6; ++k) {
    CHECK(csv.at(k, "iodepth") == (k < 3 ? "1" : "4"));
    CHECK(csv.at(k, "nvme.dbbuf") == std::vector<std::string>{"off", "spec", "vendor"}[k % 3]);
    CHECK(csv.at(k, "status") == "ok");
    CHECK(csv.at(k, "seed") == std::to_string(grid[k].seed));
    // The run saw the point's values and seed (its own config echo).
    CHECK(csv.at(k, "config.iodepth") == csv.at(k, "iodepth"));
    CHECK(csv.at(k, "config.nvme.dbbuf") == csv.at(k, "nvme.dbbuf"));
    CHECK(csv.at(k, "config.seed") == csv.at(k, "seed"));
    CHECK(csv.at(k, "config.number_ios") == "300");
    CHECK(csv.at(k, "ios") == "300");
    CHECK(csv.at(k, "eventidx.dbbuf_active") == (k % 3 == 0 ? "false" : "true"));
  }
  // Every flattened metric the brief names is a column.
  for (const char* col : {"doorbells.sq.mmio", "lat_ns.percentile.99.000000", "per_io.exits",
                          "exits.count.mmio_doorbell", "utilization.vcpu.0.busy"})
    CHECK_NOTHROW(csv.at(0, col));
  // iodepth 1, no doorbell buffer: every I/O rings the SQ and the CQ doorbell once.
  CHECK(csv.at(0, "doorbells.sq.mmio") == "300");
  CHECK(csv.at(0, "doorbells.cq.mmio") == "300");
  const auto jl = text_lines(slurp(d / "results.jsonl"));
  REQUIRE(jl.size() == 6);
  CHECK(jl[4].rfind("{\"point\":{\"iodepth\":\"4\",\"nvme.dbbuf\":\"spec\"},\"seed\":" +
                        std::to_string(grid[4].seed) + ",\"status\":\"ok\",\"error\":\"\",\"results\":{\"version\":",
                    0) == 0);

  // Same sweep, same rows.
  ScratchDir again;
  REQUIRE(run_nvmesim("sweep --grid iodepth=1,4 --grid nvme.dbbuf=off,spec,vendor --jobs 2 --out " + again.path +
                      kSmall).exit_code == 0);
  CHECK(slurp(again / "results.csv") == slurp(d / "results.csv"));
}

TEST_CASE("sweep: --resume runs only the points not done", "[sweep]") {
  ScratchDir d;
  const std::string cmd = "sweep --grid iodepth=1,2 --grid nvme.dbbuf=off,spec --jobs 2 --out " + d.path + kSmall;
  REQUIRE(run_nvmesim(cmd).exit_code == 0);
  const auto before = text_lines(slurp(d / "results.jsonl"));
  REQUIRE(before.size() == 4);
  // Drop point 2, and mark point 0 so a rerun of it would show.
  std::string marked = before[0];
  const size_t at = marked.find("\"iops\":");
  REQUIRE(at != std::string::npos);
  marked.replace(at, marked.find(',', at) - at, "\"iops\":-12345");
  {
    std::ofstream out(d / "results.jsonl");
    out << marked << "\n" << before[1] << "\n" << before[3] << "\n";
  }
  const auto r = run_nvmesim(cmd + " --resume");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("sweep: 4 points: 1 run, 3 resumed, 0 failed") != std::string::npos);
  CHECK(r.err.find("iodepth=2 nvme.dbbuf=off: ok") != std::string::npos);
  const auto after = text_lines(slurp(d / "results.jsonl"));
  REQUIRE(after.size() == 4);
  CHECK(after[0] == marked);     // kept, not rerun
  CHECK(after[2] == before[2]);  // rerun, same seed, same result
  CHECK(after[1] == before[1]);
  CHECK(after[3] == before[3]);
}

TEST_CASE("sweep: merging two halves equals one run", "[sweep]") {
  ScratchDir whole, a, b, merged;
  const std::string axes2 = " --grid nvme.dbbuf=off,spec --jobs 2 --seed 9" + kSmall;
  REQUIRE(run_nvmesim("sweep --grid iodepth=1,2,8" + axes2 + " --out " + whole.path).exit_code == 0);
  REQUIRE(run_nvmesim("sweep --grid iodepth=1" + axes2 + " --out " + a.path).exit_code == 0);
  REQUIRE(run_nvmesim("sweep --grid iodepth=2,8" + axes2 + " --out " + b.path).exit_code == 0);
  const auto r = run_nvmesim("sweep --merge " + a.path + " " + b.path + " --out " + merged.path);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(merged / "results.csv") == slurp(whole / "results.csv"));
  CHECK(slurp(merged / "results.jsonl") == slurp(whole / "results.jsonl"));
  CHECK(Csv(slurp(merged / "results.csv")).rows.size() == 6);

  // Merging one half against the whole grid: the other half is missing.
  ScratchDir partial;
  const auto p = run_nvmesim("sweep --merge " + a.path + " --out " + partial.path +
                             " --grid iodepth=1,2,8 --grid nvme.dbbuf=off,spec --seed 9");
  CHECK(p.exit_code == 1);
  const Csv csv(slurp(partial / "results.csv"));
  REQUIRE(csv.rows.size() == 6);
  CHECK(csv.at(0, "status") == "ok");
  CHECK(csv.at(2, "status") == "missing");
  CHECK(csv.at(2, "error") == "no result for this point in the merged directories");
}

TEST_CASE("sweep: --plot writes SVG and PNG with gnuplot", "[sweep]") {
  ScratchDir d;
  const auto r = run_nvmesim("sweep --grid iodepth=1,4 --grid nvme.dbbuf=off,spec --jobs 2 --out " + d.path +
                             " --plot y=per_io.exits,x=iodepth,series=nvme.dbbuf --plot y=iops,x=nvme.dbbuf" + kSmall);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string svg = slurp(d / "plot-per_io.exits-vs-iodepth.svg");
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("nvme.dbbuf=spec") != std::string::npos);  // the series legend
  CHECK(slurp(d / "plot-per_io.exits-vs-iodepth.png").rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  CHECK(slurp(d / "plot-iops-vs-nvme.dbbuf.svg").find("<svg") != std::string::npos);
  CHECK(slurp(d / "plot-iops-vs-nvme.dbbuf.png").rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  // The data gnuplot drew: x, y per series, from the CSV.
  const Csv csv(slurp(d / "results.csv"));
  const std::string dat = slurp(d / "plot-per_io.exits-vs-iodepth.dat");
  auto y = [&](size_t row) { return std::stod(csv.at(row, "per_io.exits")); };
  char expect[256];
  std::snprintf(expect, sizeof expect, "1\t%.17g\t1\n4\t%.17g\t4\n\n\n1\t%.17g\t1\n4\t%.17g\t4\n\n\n", y(0), y(2),
                y(1), y(3));
  CHECK(dat == expect);
}

TEST_CASE("sweep: a failed point is recorded, the sweep goes on, exit 1", "[sweep]") {
  ScratchDir d;
  // A point that fails where it runs: its run stalls and --fail-on-stall
  // makes that exit 3 (a combination the assembled system refuses is
  // refused before any point runs, exit 2 naming the point).
  const auto refused = run_nvmesim("sweep --grid hv.notify=deferred,ioeventfd,sync --hv.device_thread=vcpu --out " +
                                   d.path + "/refused" + kSmall);
  CHECK(refused.exit_code == 2);
  CHECK(refused.err ==
        "nvmesim sweep: error: --grid: point hv.notify=ioeventfd: --hv.notify: ioeventfd needs a host thread "
        "(hv.device_thread mainloop or iothread, not vcpu)\n");
  const std::string grid = "sweep --grid hv.fault=none,eventfd_not_cleared,eventfd_spin --hv.notify=ioeventfd "
                           "--nvme.dbbuf=spec --sim.stall_timeout=1us --fail-on-stall --jobs 2 ";
  const auto r = run_nvmesim(grid + "--out " + d.path + kSmall);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("sweep: 3 points: 3 run, 0 resumed, 1 failed") != std::string::npos);
  const Csv csv(slurp(d / "results.csv"));
  REQUIRE(csv.rows.size() == 3);
  CHECK(csv.at(0, "status") == "ok");
  CHECK(csv.at(1, "status") == "failed");
  CHECK(csv.at(1, "error") == "exit code 3");
  CHECK(csv.at(1, "outcome") == "stalled");
  CHECK(csv.at(2, "status") == "ok");
  CHECK(csv.at(2, "ios") == "300");
  // Resume reruns the failed point only (it fails again).
  const auto again = run_nvmesim(grid + "--resume --out " + d.path + kSmall);
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("sweep: 3 points: 1 run, 2 resumed, 1 failed") != std::string::npos);
}

TEST_CASE("sweep: a time range with units runs each value", "[sweep]") {
  ScratchDir d;
  const auto r = run_nvmesim("sweep --grid hv.exit_mmio=2000cyc:10000cyc:2000cyc --jobs 2 --out " + d.path + kSmall);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Csv csv(slurp(d / "results.csv"));
  REQUIRE(csv.rows.size() == 5);
  for (size_t k = 0; k < 5; ++k) {
    CHECK(csv.at(k, "hv.exit_mmio") == std::to_string(2000 * (k + 1)) + "cyc");
    CHECK(csv.at(k, "config.hv.exit_mmio") == csv.at(k, "hv.exit_mmio"));
  }
}

TEST_CASE("sweep: usage errors are one line and exit 2", "[sweep]") {
  ScratchDir d;
  struct Case { std::string args, message; };
  const std::vector<Case> cases = {
      {"--grid nvme.bogus=1 --out " + d.path, "--grid: unknown parameter 'nvme.bogus' (see --list-params)"},
      {"--grid iodepth=1", "--out: required (the directory for results.csv and results.jsonl)"},
      {"--out " + d.path, "--grid: no grid given (--grid NAME=V1,V2,... or --sweep-file FILE)"},
      {"--grid iodepth=1 --emit pbs --out " + d.path, "--emit: 'pbs' is not one of slurm, parallel"},
      {"--grid iodepth=1 --jobs 0 --out " + d.path, "--jobs: must be at least 1"},
      {"--grid iodepth=1 --plot x=iodepth --out " + d.path, "--plot: needs y=METRIC and x=COLUMN, got 'x=iodepth'"},
      {"--grid iodepth=1 --output-format=normal --out " + d.path,
       "--output-format: the sweep sets it (results go to --out DIR)"},
      {"--grid iodepth=1 --nvme.dbbuf=maybe --out " + d.path, "--nvme.dbbuf: 'maybe' is not one of off, spec, vendor"},
      {"--grid hv.exit_mmio=1us:3us:0us --out " + d.path, "--grid hv.exit_mmio: the step of '1us:3us:0us' must be > 0"},
  };
  for (const Case& c : cases) {
    const auto r = run_nvmesim("sweep " + c.args);
    INFO(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "nvmesim sweep: error: " + c.message + "\n");
  }
}

TEST_CASE("sweep: a sweep file gives axes and fixed options", "[sweep]") {
  ScratchDir d;
  {
    std::ofstream f(d / "grid.sweep");
    f << "# axes and fixed options\niodepth = 2, 8\n--number_ios=300\nnvme.dbbuf = off # no buffer\n";
  }
  const auto r = run_nvmesim("sweep --sweep-file " + (d / "grid.sweep") + " --jobs 2 --out " + (d / "out"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Csv csv(slurp(d / "out/results.csv"));
  REQUIRE(csv.rows.size() == 2);
  CHECK(csv.at(1, "iodepth") == "8");
  CHECK(csv.at(1, "nvme.dbbuf") == "off");
  CHECK(csv.at(1, "ios") == "300");
}

TEST_CASE("sweep: a slide-ready plot: labels and units, log2 x for powers of two, padded y, subtitle, a panel per further axis",
          "[sweep]") {
  ScratchDir d;
  const auto r = run_nvmesim("sweep --grid iodepth=1,4,16 --grid nvme.dbbuf=off,spec --grid rw=randread,read "
                             "--grid numjobs=1 --jobs 2 --out " + d.path +
                             " --plot y=per_io.sq_mmio,x=iodepth,series=nvme.dbbuf" + kSmall);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string gp = slurp(d / "plot-per_io.sq_mmio-vs-iodepth.gp");
  // Labels and units from the metric definitions and the parameter list.
  CHECK(gp.find("set ylabel 'SQ MMIO doorbell writes per I/O'") != std::string::npos);
  CHECK(gp.find("set xlabel 'iodepth [I/Os]'") != std::string::npos);
  CHECK(gp.find("SQ MMIO doorbell writes per I/O (per_io.sq_mmio) vs iodepth") != std::string::npos);
  // 1, 4, 16: powers of two spanning 16x, so log2 with ticks at the values.
  CHECK(gp.find("set logscale x 2") != std::string::npos);
  CHECK(gp.find("set xtics (1, 4, 16)") != std::string::npos);
  // The off series lies at exactly 1.0 (one SQ write per I/O): the y range
  // goes beyond it, so it is not drawn on the frame.
  const Csv csv(slurp(d / "results.csv"));
  double lo = 1e9, hi = -1e9;
  for (size_t k = 0; k < csv.rows.size(); ++k) {
    lo = std::min(lo, std::stod(csv.at(k, "per_io.sq_mmio")));
    hi = std::max(hi, std::stod(csv.at(k, "per_io.sq_mmio")));
  }
  CHECK(hi == 1.0);
  const size_t yr = gp.find("set yrange [");
  REQUIRE(yr != std::string::npos);
  double y0 = 0, y1 = 0;
  REQUIRE(std::sscanf(gp.c_str() + yr, "set yrange [%lf:%lf]", &y0, &y1) == 2);
  CHECK(y0 == Approx(lo - 0.06 * (hi - lo)));
  CHECK(y1 == Approx(hi + 0.06 * (hi - lo)));
  // What all points share in the subtitle: the single-valued axis and the fixed options.
  CHECK(gp.find("\\nnumjobs=1  --number_ios=300") != std::string::npos);
  // The third varying axis (rw) is a panel per value, not folded into the series.
  CHECK(gp.find("set multiplot layout 1,2") != std::string::npos);
  CHECK(gp.find("set title 'rw=randread'") != std::string::npos);
  CHECK(gp.find("set title 'rw=read'") != std::string::npos);
  const std::string png = slurp(d / "plot-per_io.sq_mmio-vs-iodepth.png");
  REQUIRE(png.rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  // PNG IHDR: width and height, big-endian, at bytes 16..23.
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(png[at])) << 24) | (uint32_t(uint8_t(png[at + 1])) << 16) |
           (uint32_t(uint8_t(png[at + 2])) << 8) | uint32_t(uint8_t(png[at + 3]));
  };
  CHECK(be32(16) == 1120);
  CHECK(be32(20) == 480);
}

TEST_CASE("sweep: plot refusals name the problem", "[sweep]") {
  ScratchDir d;
  const auto many = run_nvmesim("sweep --grid iodepth=1,2 --grid bs=4k,8k,16k,32k --grid rw=read,randread,write,randwrite "
                                "--jobs 2 --out " + d.path + " --plot y=iops,x=iodepth" + kSmall);
  CHECK(many.exit_code == 1);
  CHECK(many.err.find("--plot y=iops,x=iodepth: the other grid axes give 16 panels (at most 12): put one of them in "
                      "series= or plot a smaller grid") != std::string::npos);
  nvmesim::test::check_refused("sweep --grid iodepth=1 --out " + d.path + " --plot y=iops,x=iodepth,logx=maybe",
                "nvmesim sweep: error: --plot: logx='maybe' is not one of auto, on, off");
}

TEST_CASE("sweep: --plot cdf draws each point's latency distribution from its fio percentiles", "[sweep]") {
  ScratchDir d;
  const auto r = run_nvmesim("sweep --grid iodepth=1,4 --grid nvme.dbbuf=off,spec --jobs 2 --out " + d.path +
                             " --plot cdf,series=nvme.dbbuf --plot cdf" + kSmall);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(d / "plot-lat-cdf-by-nvme.dbbuf.png").rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  CHECK(slurp(d / "plot-lat-cdf.svg").find("iodepth=4, nvme.dbbuf=spec") != std::string::npos);  // a curve's label
  // Each curve: (min, 0), each fio percentile p at p / 100, (max, 1), in us,
  // from the point's own JSON; the points in grid order, a data set each.
  std::istringstream lines(slurp(d / "results.jsonl"));
  std::string line, expect;
  char buf[96];
  while (std::getline(lines, line)) {
    // ordered_json: the percentiles in the document's (numeric) order.
    const nlohmann::ordered_json lat = nlohmann::ordered_json::parse(line)["results"]["lat_ns"];
    std::snprintf(buf, sizeof buf, "%.17g\t0\n", lat["min"].get<double>() / 1000.0);
    expect += buf;
    for (const auto& [p, v] : lat["percentile"].items()) {
      std::snprintf(buf, sizeof buf, "%.17g\t%.17g\n", v.get<double>() / 1000.0, std::stod(p) / 100.0);
      expect += buf;
    }
    std::snprintf(buf, sizeof buf, "%.17g\t1\n\n\n", lat["max"].get<double>() / 1000.0);
    expect += buf;
  }
  CHECK(slurp(d / "plot-lat-cdf.dat") == expect);
  nvmesim::test::check_refused("sweep --grid iodepth=1 --out " + d.path + " --plot cdf,series=bs",
                               "nvmesim sweep: error: --plot: cdf,series=bs is not a grid axis");
  nvmesim::test::check_refused("sweep --grid iodepth=1 --out " + d.path + " --plot cdf,y=iops",
                               "nvmesim sweep: error: --plot: cdf takes only series=COLUMN, got 'y=iops'");
}
