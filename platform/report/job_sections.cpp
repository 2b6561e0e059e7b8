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

// One section's measured figures, merged over its vCPUs.
struct SectionFigures {
  double start_ns = 0, done_ns = 0, span_ns = 0;  // span: its first start to its last completion
  uint64_t ios = 0, read_ios = 0, write_ios = 0;
};

SectionFigures figures(const RunResults& r, const JobSection& s) {
  SectionFigures f;
  bool first = true;
  for (unsigned v : s.vcpus) {
    if (v >= r.vcpus.size()) continue;
    const VcpuFigures& x = r.vcpus[v];
    f.start_ns = first ? x.start_ns : std::min(f.start_ns, x.start_ns);
    f.done_ns = first ? x.done_ns : std::max(f.done_ns, x.done_ns);
    f.span_ns = std::max(f.span_ns, x.start_ns + x.sim_time_ns);
    f.ios += x.ios;
    f.read_ios += x.read.ios;
    f.write_ios += x.write.ios;
    first = false;
  }
  f.span_ns = std::max(0.0, f.span_ns - f.start_ns);
  return f;
}

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
  for (const JobSection& s : r.sections) {
    o << "  [" << s.name << "] group " << s.group << ", vcpu";
    for (size_t k = 0; k < s.vcpus.size(); ++k) o << (k ? "," : "") << s.vcpus[k];
    if (!s.waits_for.empty()) {
      o << ", after";
      for (const std::string& w : s.waits_for) o << " " << w;
    }
    o << ":";
    for (const auto& [k, v] : s.options) o << " " << k << "=" << v;
    o << "\n";
    const SectionFigures f = figures(r, s);
    o << "    start " << num("%.3f", f.start_ns / 1000.0) << " us, done " << num("%.3f", f.done_ns / 1000.0)
      << " us: " << f.ios << " I/Os (read " << f.read_ios << ", write " << f.write_ios << ") in "
      << num("%.3f", f.span_ns / 1000.0) << " us, IOPS=" << num("%.0f", f.span_ns > 0 ? f.ios / (f.span_ns / 1e9) : 0)
      << "\n";
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

report::Json job_results_json(const RunResults& r) {
  report::Json jobs = report::Json::array();
  for (const JobSection& s : r.sections) {
    const SectionFigures f = figures(r, s);
    report::Json j;
    j["name"] = s.name;
    j["start_ns"] = report::fixed(f.start_ns, 3);
    j["done_ns"] = report::fixed(f.done_ns, 3);
    j["sim_time_ns"] = report::fixed(f.span_ns, 3);
    j["ios"] = f.ios;
    j["read_ios"] = f.read_ios;
    j["write_ios"] = f.write_ios;
    j["iops"] = report::fixed(f.span_ns > 0 ? f.ios / (f.span_ns / 1e9) : 0, 3);
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace nvmesim::platform
