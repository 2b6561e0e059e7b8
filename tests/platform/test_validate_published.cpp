// nvmesim validate on published figures: the bands of the new metrics, the
// table reader, the grouping by source and the counting of points, and the
// command on tiny hand-made tables; also the reference format's clat beside.
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/validate/published.h"
#include "nvmesim/platform/validate/published_csv.h"
#include "tests/platform/run_binary.h"
#include "tests/platform/temp_file.h"

using namespace nvmesim::platform;
using nvmesim::test::check_refused;
using nvmesim::test::run_nvmesim;
using nvmesim::test::TempFile;

namespace {

const std::string kFigures = NVMESIM_SOURCE_DIR "/validation/published/figures.csv";

const std::string kHeader =
    "source,title,author,date,accel,preset,rw,bs,iodepth,numjobs,dbbuf,ioeventfd,iothread,polling,label,baseline,"
    "iops,mmio_per_io,lat_mean_ns\n";

// A row of source `id`: depth, dbbuf, baseline, IOPS, MMIO writes per I/O, mean latency.
std::string row(const std::string& id, int depth, const std::string& dbbuf, const std::string& baseline,
                const std::string& iops, const std::string& mmio, const std::string& lat = "",
                const std::string& title = "\"A, title\"") {
  return id + "," + title + ",Someone,2022-06-16,kvm,qemu-7.1,randread,4096," + std::to_string(depth) + ",1," + dbbuf +
         ",off,off,off,QD" + std::to_string(depth) + "," + baseline + "," + iops + "," + mmio + "," + lat + "\n";
}

std::string refusal(const std::string& csv) {
  TempFile f(csv);
  try {
    read_published_csv(f.path);
  } catch (const ConfigError& e) {
    return std::string(e.what()).substr(f.path.size());
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("validate published: per-I/O counts are in band within 0.15, latency ratios within 25%") {
  CHECK(per_io_in_band(2.00, 2.01));
  CHECK(per_io_in_band(0.42, 0.27));  // exactly 0.15 away
  CHECK_FALSE(per_io_in_band(0.43, 0.27));
  CHECK_FALSE(per_io_in_band(0.11, 0.27));
  CHECK(latency_ratio_in_band(1.25, 1.0));
  CHECK(latency_ratio_in_band(0.75, 1.0));
  CHECK_FALSE(latency_ratio_in_band(1.26, 1.0));
  CHECK_FALSE(latency_ratio_in_band(0.74, 1.0));
  CHECK_FALSE(latency_ratio_in_band(1.0, 0.0));  // no published ratio
}

TEST_CASE("validate published: a row's points are its published figures, ratios to the baseline row") {
  PublishedRow base;
  base.line = 2;
  base.baseline = true;
  base.iops = 20000;
  base.mmio_per_io = 2.0;
  base.lat_mean_ns = 40000;
  base.sq_mmio_per_io = base.cq_mmio_per_io = base.lat_p50_ns = base.lat_p99_ns = std::nan("");
  PublishedRow row = base;
  row.line = 3;
  row.baseline = false;
  row.iops = 60000;  // ratio 3
  row.mmio_per_io = 0.5;
  row.sq_mmio_per_io = 0.2;
  row.lat_mean_ns = 60000;  // ratio 1.5
  ModelFigures model_base, model;
  model_base.iops = 10000;
  model_base.lat_mean_ns = 100000;
  model.iops = 38000;  // ratio 3.8: out (3 * 1.25 = 3.75)
  model.sq_mmio = 0.3;
  model.cq_mmio = 0.3;
  model.lat_mean_ns = 120000;  // ratio 1.2, 20% below 1.5: in

  const auto points = published_points(row, base, model, model_base);
  REQUIRE(points.size() == 4);
  CHECK(points[0].metric == "iops_ratio");
  CHECK(points[0].reference == Approx(3.0));
  CHECK(points[0].model == Approx(3.8));
  CHECK_FALSE(points[0].in_band);
  CHECK(points[1].metric == "mmio_per_io");
  CHECK(points[1].model == Approx(0.6));  // SQ + CQ
  CHECK(points[1].in_band);              // 0.1 away
  CHECK(points[2].metric == "sq_mmio_per_io");
  CHECK(points[2].model == Approx(0.3));
  CHECK(points[2].in_band);
  CHECK(points[3].metric == "lat_mean_ratio");
  CHECK(points[3].reference == Approx(1.5));
  CHECK(points[3].model == Approx(1.2));
  CHECK(points[3].in_band);

  // The baseline's IOPS is fitted on and its latency is what ratios are
  // taken to: only its count is a point.
  const auto base_points = published_points(base, base, model_base, model_base);
  REQUIRE(base_points.size() == 1);
  CHECK(base_points[0].metric == "mmio_per_io");

  // A stalled run's ratios are out of band; its counts are still judged.
  model.stalled = true;
  model.iops = 30000;
  const auto stalled = published_points(row, base, model, model_base);
  CHECK_FALSE(stalled[0].in_band);
  CHECK(stalled[1].in_band);
  CHECK_FALSE(stalled[3].in_band);
}

TEST_CASE("validate published: the committed figures group by source, and the cover letter gives 14 points on two baselines") {
  const auto sources = read_published_csv(kFigures);
  REQUIRE(sources.size() >= 1);
  const PublishedSource& cover = sources.front();
  CHECK(cover.id == "dbbuf-v3");
  CHECK(cover.title == "[PATCH v3 0/2] hw/nvme: Add shadow doorbell buffer support");
  CHECK(cover.author == "Jinhao Fan");
  CHECK(cover.message_id == "20220616123408.3306055-1-fanjinhao21s@ict.ac.cn");
  CHECK(cover.commit == "3f7fe8de3d49");
  CHECK(cover.accel == "kvm");
  CHECK(cover.presets == "qemu-7.1,kvm");  // QEMU 7.1's device, run under KVM
  REQUIRE(cover.rows.size() == 8);
  const PublishedRow& base = cover.reference_baseline();
  CHECK(base.iodepth == 1);
  CHECK_FALSE(base.dbbuf);
  CHECK(base.iops == 25100);
  CHECK(base.mmio_per_io == Approx(2.01));
  CHECK(cover.rows[7].iodepth == 8);
  CHECK(cover.rows[7].dbbuf);
  CHECK(cover.rows[7].iops == 82500);
  CHECK(cover.rows[7].mmio_per_io == Approx(0.46));
  // Two baselines (iodepth 1 without and with the buffer: two fitted costs):
  // 6 IOPS ratios + 8 MMIO writes per I/O.
  CHECK(cover.rows[4].baseline);
  CHECK(published_point_count(cover) == 14);
  unsigned baselines = 0, points = 0;
  for (const PublishedSource& s : sources) {
    for (const PublishedRow& r : s.rows) baselines += r.baseline;
    points += published_point_count(s);
    // Every figure is a point but a baseline's IOPS.
    unsigned figures = 0;
    for (const PublishedRow& r : s.rows)
      figures += !std::isnan(r.iops) + !std::isnan(r.mmio_per_io) + !std::isnan(r.sq_mmio_per_io) +
                 !std::isnan(r.cq_mmio_per_io);
    unsigned source_baselines = 0;
    for (const PublishedRow& r : s.rows) source_baselines += r.baseline;
    CHECK(published_point_count(s) == figures - source_baselines);
  }
  CHECK(baselines == sources.size() + 1);  // one per source, two for the cover letter
  CHECK(points >= 15);
}

TEST_CASE("validate published: the reader refuses a bad table by line and column") {
  const std::string good = kHeader + row("a", 1, "off", "yes", "20000", "2.01") + row("a", 2, "on", "no", "30000", "0.5");
  CHECK(refusal(good) == "(accepted)");
  TempFile quoted(good);
  CHECK(read_published_csv(quoted.path).front().title == "A, title");

  CHECK(refusal("source,title,date,accel,rw,bs,iodepth,numjobs,dbbuf,ioeventfd,baseline\na,t,d,kvm,randread,4096,1,1,"
                "off,off,yes\n") == " line 1: no column 'iops'");
  CHECK(refusal(kHeader + row("a", 1, "off", "yes", "25.1K", "2.01")) ==
        " line 2: column iops: '25.1K' is not a non-negative number");
  CHECK(refusal(kHeader + row("a", 1, "off", "yes", "20000", "two")) ==
        " line 2: column mmio_per_io: 'two' is not a non-negative number");
  CHECK(refusal(kHeader + row("a", 1, "off", "yes", "", "2.01")) == " line 2: column iops: is empty");
  CHECK(refusal(kHeader + row("a", 1, "off", "maybe", "20000", "2.01")) ==
        " line 2: column baseline: 'maybe' is not one of yes, no");
  CHECK(refusal(kHeader + row("a", 1, "off", "yes", "20000", "2.01") + row("a", 2, "on", "no", "30000", "0.5", "", "Other")) ==
        " line 3: column title: 'Other' differs from line 2 of source a (one value per source)");
  CHECK(refusal(kHeader + row("a", 1, "off", "no", "20000", "2.01")) ==
        ": source a (line 2) has no baseline row (column baseline)");
  CHECK(refusal(kHeader + row("a", 1, "off", "yes", "20000", "2.01") + row("a", 2, "on", "no", "", "")) ==
        " line 3: no figure (iops, mmio_per_io, sq_mmio_per_io, cq_mmio_per_io, lat_*_ns)");
  CHECK(refusal(kHeader + row("a", 1, "off", "yes", "20000", "2.01") + row("a", 2, "on", "no", "30000", "0.5", "50000")) ==
        " line 3: column lat_mean_ns: the baseline row (line 2) gives none to take its ratio to");
  CHECK(refusal(kHeader + row("a", 1, "off", "yes", "20000", "2.01") + row("a", 1, "off", "no", "20000", "2.01")) ==
        " line 3: source a: the row QD1 rw=randread bs=4096 iodepth=1 numjobs=1 dbbuf=off ioeventfd=off iothread=off "
        "polling=off appears twice");
  CHECK(refusal(kHeader + row("a", 1, "off", "yes", "20000", "2.01", "", "\"open")) ==
        " line 2: a quoted cell is not closed");
  std::string polling = row("a", 1, "off", "yes", "20000", "2.01");
  polling.replace(polling.find("off,off,QD1"), 11, "off,on,QD1");
  CHECK(refusal(kHeader + polling) == " line 2: column polling: on needs iothread=on (the queues are polled by an iothread)");
}

TEST_CASE("validate published: a tiny table runs end to end, fitted on its baseline") {
  // Without the buffer every update rings: 2 MMIO writes per I/O in any model.
  TempFile figures(kHeader + row("tiny", 1, "off", "yes", "20000", "2.0") + row("tiny", 2, "off", "no", "30000", "2.0"));
  const auto r = run_nvmesim("validate " + figures.path + " --preset qemu-7.1 --number_ios=200 --output-format=json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["format"] == "published");
  REQUIRE(j["sources"].size() == 1);
  const auto& s = j["sources"][0];
  CHECK(s["source"] == "tiny");
  CHECK(s["presets"] == nlohmann::json::array({"qemu-7.1", "qemu-7.1"}));
  REQUIRE(s["calibration"].size() == 1);
  const auto& c = s["calibration"][0];
  CHECK(c["parameter"] == "hv.exit_mmio");
  CHECK(c["matched_rows"] == 1);
  CHECK(c["reference"] == 20000.0);
  CHECK(c["converged"] == true);
  REQUIRE(s["rows"].size() == 2);
  const auto& base = s["rows"][0];
  CHECK(base["baseline"] == true);
  CHECK(std::abs(base["model"]["iops"].get<double>() - 20000.0) <= 0.05 * 20000.0);
  CHECK(base["model"]["per_io.mmio"] == 2.0);
  REQUIRE(base["points"].size() == 1);
  CHECK(base["points"][0]["in_band"] == true);
  const auto& qd2 = s["rows"][1];
  REQUIRE(qd2["points"].size() == 2);
  CHECK(qd2["points"][0]["metric"] == "iops_ratio");
  CHECK(qd2["points"][0]["published"] == 1.5);
  CHECK(s["points"] == 3);
  CHECK(j["points"] == 3);
  unsigned in = 0;
  for (const auto& row : s["rows"])
    for (const auto& p : row["points"]) in += p["in_band"].get<bool>();
  CHECK(j["in_band"] == in);
  CHECK(j["in_band_share"].get<double>() == Approx(in / 3.0).margin(1e-4));

  const auto text = run_nvmesim("validate " + figures.path + " --no-calibrate --number_ios=200");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("source tiny: Someone, \"A, title\", 2022-06-16") != std::string::npos);
  CHECK(text.out.find("calibrated: nothing") != std::string::npos);
  CHECK(text.out.find("source tiny: in band: ") != std::string::npos);
  CHECK(text.out.find(" of 3 points (") != std::string::npos);
}

TEST_CASE("validate published: bad options for published figures are refused with one line") {
  TempFile figures(kHeader + row("a", 1, "off", "yes", "20000", "2.0"));
  const std::string p = figures.path;
  check_refused("validate " + p + " --timing x.csv",
                "nvmesim validate: error: --timing: applies to the real-system reference "
                "(validation/qemu/results.csv), not to published figures");
  check_refused("validate " + p + " --calibrate hv.inject@dbbuf=on",
                "nvmesim validate: error: --calibrate: hv.inject@dbbuf=on: @ROWS selects rows of the TCG reference; a "
                "published source fits on its baseline rows");
  check_refused("validate " + p + " --calibrate rw",
                "nvmesim validate: error: --calibrate: 'rw' is not a time parameter (see --list-params)");
  check_refused("validate " + p + " --calibrate hv.inject:spread",
                "nvmesim validate: error: --calibrate: hv.inject:spread needs lat_p50_ns and lat_p99_ns (source a "
                "(line 2), baseline line 2)");
  check_refused("validate " + p + " --set iodepth=4",
                "nvmesim validate: error: --set: iodepth is set by each row of the figures (or --number_ios)");
  std::string csv = kHeader + row("a", 1, "off", "yes", "20000", "2.0");
  csv.replace(csv.find("qemu-7.1"), 8, "qemu-9.9");
  TempFile unknown_preset(csv);
  check_refused("validate " + unknown_preset.path,
                "nvmesim validate: error: source a (line 2): column preset: --preset: 'qemu-9.9' is not one of "
                "haswell-ep, ivybridge-i7, qemu-7.2, qemu-7.1, kvm, tcg");
  TempFile bad_number(kHeader + row("a", 1, "off", "yes", "20000", "x"));
  check_refused("validate " + bad_number.path,
                "nvmesim validate: error: " + bad_number.path + " line 2: column mmio_per_io: 'x' is not a non-negative number");
}

TEST_CASE("validate: the reference's clat p50/p99 are reported beside the model's latency percentiles") {
  TempFile ref(
      "rw,bs,iodepth,numjobs,dbbuf,ioeventfd,iops,sq_mmio_per_io,cq_mmio_per_io,clat_p50_ns,clat_p99_ns\n"
      "randread,4096,1,1,off,off,20000,1,1,100000,200000\n");
  const auto r = run_nvmesim("validate " + ref.path + " --no-calibrate --number_ios=200 --output-format=json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 1);
  const auto& row = j["rows"][0];
  CHECK(row["reference"]["clat_p50_ns"] == 100000.0);
  CHECK(row["reference"]["clat_p99_ns"] == 200000.0);
  CHECK(row["model"]["clat_p50_ns"].get<double>() > 0);
  CHECK(row["model"]["clat_p99_ns"].get<double>() >= row["model"]["clat_p50_ns"].get<double>());
  CHECK(row["in_band_by_metric"].size() == 3);  // not banded
  const auto text = run_nvmesim("validate " + ref.path + " --no-calibrate --number_ios=200");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("clat p50 (us)") != std::string::npos);
  CHECK(text.out.find("  100.0 ") != std::string::npos);
}
