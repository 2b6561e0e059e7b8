// Job file sections in the report (see job_sections.h).
#include "nvmesim/platform/report/job_sections.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "nvmesim/platform/fio/fio_job.h"
#include "nvmesim/platform/report/json_out.h"

namespace nvmesim::platform {

namespace {

std::string num(const char* format, double v) {
  char b[48];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

}  // namespace

std::vector<JobSection> job_sections(const FioJobs& fio) {
  std::vector<JobSection> out;
  if (fio.jobs.size() < 2 && !fio.ordered) return out;
  unsigned vcpu = 0;
  for (const FioJob& job : fio.jobs) {
    JobSection s;
    s.name = job.name;
    s.options = job.options;
    s.group = job.group;
    for (uint32_t k = 0; k < job.numjobs; ++k) s.vcpus.push_back(vcpu + k);
    // The names of the jobs its first vCPU waits for, in file order.
    if (vcpu < fio.vcpu_waits_for.size())
      for (unsigned w : fio.vcpu_waits_for[vcpu]) {
        const std::string& name = fio.jobs[fio.vcpu_job[w]].name;
        if (std::find(s.waits_for.begin(), s.waits_for.end(), name) == s.waits_for.end()) s.waits_for.push_back(name);
      }
    vcpu += job.numjobs;
    out.push_back(std::move(s));
  }
  return out;
}

void write_job_sections(const RunResults& r, std::ostream& o) {
  if (r.sections.empty()) return;
  o << "job sections (each its own options; times from the measured phase's start):\n";
  for (unsigned k = 0; k < r.sections.size(); ++k) {
    const JobSection& s = r.sections[k];
    o << "  [" << s.name << "] group " << s.group << ", vcpu";
    for (size_t k = 0; k < s.vcpus.size(); ++k) o << (k ? "," : "") << s.vcpus[k];
    if (!s.waits_for.empty()) {
      o << ", after";
      for (const std::string& w : s.waits_for) o << " " << w;
    }
    o << ":";
    for (const auto& [k, v] : s.options) o << " " << k << "=" << v;
    o << "\n";
    auto figure = [&](const char* name) { return r.figure(std::string("job_results.") + name, k); };
    o << "    start " << num("%.3f", figure("start_ns") / 1000.0) << " us, done "
      << num("%.3f", figure("done_ns") / 1000.0) << " us: " << r.count("job_results.ios", k) << " I/Os (read "
      << r.count("job_results.read_ios", k) << ", write " << r.count("job_results.write_ios", k) << ") in "
      << num("%.3f", figure("sim_time_ns") / 1000.0) << " us, IOPS=" << num("%.0f", figure("iops")) << "\n";
  }
}

report::Json job_sections_json(const RunResults& r) {
  report::Json jobs = report::Json::array();
  for (const JobSection& s : r.sections) {
    report::Json j;
    j["name"] = s.name;
    j["group"] = s.group;
    j["vcpus"] = s.vcpus;
    j["waits_for"] = s.waits_for;
    report::Json& options = j["options"] = report::Json::object();
    for (const auto& [k, v] : s.options) options[k] = v;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace nvmesim::platform
