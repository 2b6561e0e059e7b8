// fio's job order in job files: stonewall (wait_for_previous) and wait_for
// start a job when the jobs before it (or the named one) have finished;
// stonewall and new_group start a reporting group (fio 3.33 HOWTO; init.c
// add_job). Each section keeps its own options in the report.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <iterator>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "run_binary.h"

using nvmesim::test::run_nvmesim;
using Json = nlohmann::ordered_json;

namespace {

struct JobFile {
  std::string path;
  explicit JobFile(const std::string& text) {
    static int n = 0;
    path = "/tmp/nvmesim_order_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".fio";
    std::ofstream(path) << text;
  }
  ~JobFile() { std::remove(path.c_str()); }
};

const char* const kPhases =
    "[global]\nrw=randread\nbs=4k\niodepth=4\n"
    "[a]\nnumber_ios=200\n"
    "[b]\nstonewall\nrw=randwrite\nnumber_ios=300\n"
    "[c]\nwait_for=a\niodepth=8\nnumber_ios=100\n";

Json run_json(const std::string& args) {
  const auto r = run_nvmesim(args + " --output-format=json");
  INFO(args << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

// Each section's "jobs" entry (beside "config") with its "job_results"
// entry (at the end) merged in; the two lists name the same sections in order.
Json sections(const Json& doc) {
  Json out = Json::array();
  REQUIRE(doc["jobs"].size() == doc["job_results"].size());
  for (size_t k = 0; k < doc["jobs"].size(); ++k) {
    Json j = doc["jobs"][k];
    CHECK(doc["job_results"][k]["name"] == j["name"]);
    for (auto it = doc["job_results"][k].begin(); it != doc["job_results"][k].end(); ++it) j[it.key()] = it.value();
    out.push_back(j);
  }
  return out;
}

}  // namespace

TEST_CASE("fio order: stonewall and wait_for start a job when the jobs it waits for have finished",
          "[fio][order][binary]") {
  const JobFile file(kPhases);
  const Json doc = run_json("--job " + file.path + " --nvme.dbbuf=spec");
  const Json jobs = sections(doc);
  REQUIRE(jobs.size() == 3);
  // The header's order: config, then each section's own options.
  const Json::const_iterator config = doc.find("config");
  CHECK(std::next(config).key() == "jobs");
  const Json &a = jobs[0], &b = jobs[1], &c = jobs[2];
  CHECK(a["name"] == "a");
  CHECK(a["start_ns"] == 0.0);
  CHECK(a["waits_for"] == Json::array());
  // b (stonewall) and c (wait_for=a) start at the simulated time a finished,
  // after a's last completion; b and c then run at the same time.
  CHECK(a["done_ns"].get<double>() > 0);
  CHECK(b["start_ns"] == a["done_ns"]);
  CHECK(c["start_ns"] == a["done_ns"]);
  CHECK(a["done_ns"].get<double>() >= a["start_ns"].get<double>() + a["sim_time_ns"].get<double>());
  CHECK(c["done_ns"].get<double>() < b["done_ns"].get<double>());  // 100 reads at iodepth 8 beside 300 writes
  CHECK(b["waits_for"] == Json::array({"a"}));
  CHECK(c["waits_for"] == Json::array({"a"}));
  // I/O counts per job, and groups: stonewall starts group 1, wait_for does not.
  CHECK(a["read_ios"] == 200);
  CHECK(a["write_ios"] == 0);
  CHECK(b["read_ios"] == 0);
  CHECK(b["write_ios"] == 300);
  CHECK(c["read_ios"] == 100);
  CHECK(a["group"] == 0);
  CHECK(b["group"] == 1);
  CHECK(c["group"] == 1);
  CHECK(doc["read_ios"] == 300);
  CHECK(doc["write_ios"] == 300);
  // The measured interval of the run spans both phases: it ends at b's last completion.
  CHECK(doc["sim_time_ns"].get<double>() == Approx(b["start_ns"].get<double>() + b["sim_time_ns"].get<double>()).epsilon(1e-9));
  // A job's IOPS is over its own interval (from its start).
  CHECK(b["iops"].get<double>() == Approx(300 / (b["sim_time_ns"].get<double>() / 1e9)).epsilon(1e-6));

  // Each section keeps its own options, as written.
  CHECK(a["options"] == Json({{"number_ios", "200"}}));
  CHECK(b["options"] == Json({{"rw", "randwrite"}, {"number_ios", "300"}}));
  CHECK(c["options"] == Json({{"wait_for", "a"}, {"iodepth", "8"}, {"number_ios", "100"}}));
}

TEST_CASE("fio order: stonewall in [global] runs every job after the one above", "[fio][order][binary]") {
  const JobFile file("[global]\nstonewall\nnumber_ios=150\niodepth=2\n[x]\n[y]\nrw=randwrite\n[z]\nbs=8k\n");
  const Json jobs = sections(run_json("--job " + file.path + " --nvme.dbbuf=off"));
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0]["start_ns"] == 0.0);
  for (size_t k = 1; k < 3; ++k) {
    INFO(k);
    CHECK(jobs[k]["start_ns"] == jobs[k - 1]["done_ns"]);
    CHECK(jobs[k]["group"] == int(k));
    CHECK(jobs[k]["ios"] == 150);
  }
  CHECK(jobs[2]["waits_for"] == Json::array({"x", "y"}));
  // Without an order, every section starts with the measured phase.
  const JobFile together("[global]\nnumber_ios=150\niodepth=2\n[x]\n[y]\nrw=randwrite\nnew_group\n");
  const Json t = sections(run_json("--job " + together.path + " --nvme.dbbuf=off"));
  REQUIRE(t.size() == 2);
  CHECK(t[0]["start_ns"] == 0.0);
  CHECK(t[1]["start_ns"] == 0.0);
  CHECK(t[1]["group"] == 1);  // new_group: a group, no wait
}

TEST_CASE("fio order: the text report and json+ show each job, its group and its start",
          "[fio][order][binary]") {
  const JobFile file(kPhases);
  const Json doc = sections(run_json("--job " + file.path + " --nvme.dbbuf=spec"));
  const auto text = run_nvmesim("--job " + file.path + " --nvme.dbbuf=spec");
  REQUIRE(text.exit_code == 0);
  auto us = [](const Json& v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", v.get<double>() / 1000.0);
    return std::string(b);
  };
  const Json& b = doc[1];
  const std::string expected =
      "job sections (each its own options; times from the measured phase's start):\n"
      "  [a] group 0, vcpu0: number_ios=200\n"
      "    start 0.000 us, done " + us(doc[0]["done_ns"]) + " us: 200 I/Os (read 200, write 0) in " +
      us(doc[0]["sim_time_ns"]) + " us, IOPS=";
  CHECK(text.out.find(expected) != std::string::npos);
  CHECK(text.out.find("  [b] group 1, vcpu1, after a: rw=randwrite number_ios=300\n    start " + us(b["start_ns"]) +
                      " us, done " + us(b["done_ns"]) + " us: 300 I/Os (read 0, write 300)") != std::string::npos);
  CHECK(text.out.find("  [c] group 1, vcpu2, after a: wait_for=a iodepth=8 number_ios=100\n") != std::string::npos);

  const auto plus = run_nvmesim("--job " + file.path + " --nvme.dbbuf=spec --output-format=json+");
  REQUIRE(plus.exit_code == 0);
  const Json p = Json::parse(plus.out);
  REQUIRE(p["jobs"].size() == 3);
  CHECK(p["jobs"][0]["groupid"] == 0);
  CHECK(p["jobs"][1]["groupid"] == 1);
  CHECK(p["jobs"][2]["groupid"] == 1);
  CHECK(p["jobs"][1]["write"]["total_ios"] == 300);
  // fio's runtime (ms, rounded up) is the job's own interval.
  CHECK(p["jobs"][1]["job_runtime"] == uint64_t(std::ceil(b["sim_time_ns"].get<double>() / 1e6)));
  // group_reporting: one entry per group.
  const JobFile grouped("[global]\ngroup_reporting\nnumber_ios=100\n[a]\nnumjobs=2\n[b]\nstonewall\nnumjobs=2\n");
  const auto g = run_nvmesim("--job " + grouped.path + " --nvme.dbbuf=spec --output-format=json+");
  REQUIRE(g.exit_code == 0);
  const Json gj = Json::parse(g.out);
  REQUIRE(gj["jobs"].size() == 2);
  CHECK(gj["jobs"][0]["read"]["total_ios"] == 200);
  CHECK(gj["jobs"][1]["groupid"] == 1);
  CHECK(gj["jobs"][1]["read"]["total_ios"] == 200);
}

TEST_CASE("fio order: wait_for names a unique job above it", "[fio][order][binary]") {
  struct Row {
    const char* text;
    const char* error;  // after "--job FILE line 2: "
  };
  const Row rows[] = {
      {"[a]\nwait_for=b\n[b]\n", "wait_for=b: that job comes later in the file (fio waits only for jobs above)"},
      {"[a]\nwait_for=nosuch\n", "wait_for=nosuch: no job has that name"},
      {"[a]\nwait_for=a\n", "wait_for=a: a job cannot wait for itself"},
      {"[a]\n[a]\n[c]\nwait_for=a\n", "wait_for=a: more than one job has that name (fio needs it unique)"},
      {"[a]\nstonewall=maybe\n", "stonewall=maybe: not a boolean (1/0, true/false)"},
  };
  for (const Row& row : rows) {
    const JobFile file(row.text);
    const std::string line = std::string(row.text).find("[c]") != std::string::npos ? "4" : "2";
    nvmesim::test::check_refused("--job " + file.path,
                                 "nvmesim: error: --job " + file.path + " line " + line + ": " + row.error);
  }
}
