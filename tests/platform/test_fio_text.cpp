// fio's text pieces (platform/report/fio_text.h) against what fio 3.33
// prints: figures from a real fio report (rate_iops=2000, 400 reads of 4k in
// 200 ms: "bw=8000KiB/s (8192kB/s)", "io=1600KiB (1638kB)", "max=12043k")
// and the unit rules of stat.h nsec_to_usec / nsec_to_msec.
#include <catch2/catch.hpp>

#include <sstream>

#include "nvmesim/platform/report/fio_text.h"
#include "stats_tree.h"

using namespace nvmesim;
using platform::fio_text::num2str;

TEST_CASE("fio text: num2str as fio prints bandwidths, sizes and large latencies", "[fio][text]") {
  CHECK(num2str(8192000, 4, true, "B/s") == "8000KiB/s");
  CHECK(num2str(8192000, 4, false, "B/s") == "8192kB/s");
  CHECK(num2str(1638400, 4, true, "B") == "1600KiB");
  CHECK(num2str(1638400, 4, false, "B") == "1638kB");
  CHECK(num2str(12043000, 6, false, "") == "12043k");
  CHECK(num2str(781, 6, false, "") == "781");
  CHECK(num2str(10276044, 4, true, "B") == "9.80MiB");  // a decimal where there is room
}

TEST_CASE("fio text: latency lines switch to usec and msec by fio's rule", "[fio][text]") {
  auto line = [](std::initializer_list<uint64_t> ns) {
    models::LatencyStat l;
    for (uint64_t v : ns) l.add(v);
    std::ostringstream o;
    platform::fio_text::latency_line(o, "clat", l);
    return o.str();
  };
  // Small or tight values stay in nsec.
  CHECK(line({1000, 2000, 3000}).rfind("    clat (nsec): min=1000, max=3000,", 0) == 0);
  CHECK(line({200000, 200000}).rfind("    clat (nsec):", 0) == 0);  // no spread (stdev 0)
  // min > 2000, max > 99999 and stdev > 1000: usec.
  CHECK(line({36000, 5748000, 100000}).rfind("    clat (usec): min=36, max=5748,", 0) == 0);
  // min > 2 ms, max > 99.999999 ms and stdev > 1 ms: msec.
  CHECK(line({3000000, 150000000}).rfind("    clat (msec): min=3, max=150,", 0) == 0);
}

TEST_CASE("fio text: the percentile block scales as fio's show_clat_percentiles", "[fio][text]") {
  models::LatencyHistogram h;
  for (int i = 0; i < 100; ++i) h.add(100000 + uint64_t(i) * 1000);  // 100..199 us
  std::ostringstream o;
  platform::fio_text::percentiles(o, "clat", h);
  const std::string s = o.str();
  CHECK(s.rfind("    clat percentiles (usec):\n     |  1.00th=[  100],", 0) == 0);
  CHECK(s.find("99.99th=[  200]\n") != std::string::npos);  // rounded up to whole usec
}

TEST_CASE("fio text: a group's status line sums its jobs and spans their bandwidths", "[fio][text]") {
  // Two jobs of one group, 1000 reads of 4 KiB each, in 2 ms and 4 ms: the
  // group moved 8192000 bytes; fio's bandwidth is over the longest run,
  // 8192000 B / 4 ms = 2048 MB/s = 1953 MiB/s; the jobs' own are 2048 MB/s
  // (1953 MiB/s) and 1024 MB/s (976.56 MiB/s, which num2str rounds to 977).
  platform::RunResults r;
  for (double ns : {2e6, 4e6}) {
    const std::string vcpu = "vcpu" + std::to_string(r.vcpus.size()) + ".";
    test::put_stat(r.stats, vcpu + "read_ios", 1000);
    test::put_stat(r.stats, vcpu + "read_bytes", 4096000, stats::Unit::Bytes);
    test::put_stat(r.stats, vcpu + "write_ios", 0);
    test::put_stat(r.stats, vcpu + "write_bytes", 0, stats::Unit::Bytes);
    platform::VcpuFigures f;
    f.sim_time_ns = ns;
    r.vcpus.push_back(f);
  }
  std::ostringstream o;
  platform::fio_text::group_status(o, r);
  CHECK(o.str() ==
        "\nRun status group 0 (all jobs):\n"
        "   READ: bw=1953MiB/s (2048MB/s), 977MiB/s-1953MiB/s (1024MB/s-2048MB/s), io=8000KiB (8192kB), "
        "run=2-4msec\n");
}

TEST_CASE("fio text: one job's bandwidth range equals its group's bandwidth", "[fio][text]") {
  // fio's stat.c divides both by the runtime in whole milliseconds, rounded
  // up: 2000 reads of 4 KiB in 10.976 ms are 8192000 B / 11 ms =
  // 744727272 B/s, 710 MiB/s (745 MB/s) for the group and for the job alike.
  platform::RunResults r;
  test::put_stat(r.stats, "vcpu0.read_ios", 2000);
  test::put_stat(r.stats, "vcpu0.read_bytes", 8192000, stats::Unit::Bytes);
  test::put_stat(r.stats, "vcpu0.write_ios", 0);
  test::put_stat(r.stats, "vcpu0.write_bytes", 0, stats::Unit::Bytes);
  platform::VcpuFigures f;
  f.sim_time_ns = 10.976e6;
  r.vcpus.push_back(f);
  std::ostringstream o;
  platform::fio_text::group_status(o, r);
  CHECK(o.str() ==
        "\nRun status group 0 (all jobs):\n"
        "   READ: bw=710MiB/s (745MB/s), 710MiB/s-710MiB/s (745MB/s-745MB/s), io=8000KiB (8192kB), "
        "run=11-11msec\n");
}

TEST_CASE("fio text: a job file's jobs get a block each, or one per group with group_reporting", "[fio][text]") {
  // Section a (numjobs=2: vCPUs 0 and 1) and section b (vCPU 2), one group.
  // vCPU v: 1000 x (v + 1) reads of 4 KiB in 2 ms, so 500k, 1.00M, 1.50M IOPS.
  platform::RunResults r;
  for (unsigned v = 0; v < 3; ++v) {
    const std::string vcpu = "vcpu" + std::to_string(v) + ".";
    test::put_stat(r.stats, vcpu + "read_ios", 1000 * (v + 1));
    test::put_stat(r.stats, vcpu + "read_bytes", 4096000 * (v + 1), stats::Unit::Bytes);
    test::put_stat(r.stats, vcpu + "write_ios", 0);
    test::put_stat(r.stats, vcpu + "write_bytes", 0, stats::Unit::Bytes);
    platform::VcpuFigures f;
    f.sim_time_ns = 2e6;
    r.vcpus.push_back(f);
  }
  platform::JobSection a, b;
  a.name = "a";
  a.vcpus = {0, 1};
  b.name = "b";
  b.vcpus = {2};
  r.sections = {a, b};
  auto heads = [&](bool group_reporting) {
    r.group_reporting = group_reporting;
    std::ostringstream o;
    platform::fio_text::job_blocks(o, r);
    std::istringstream in(o.str());
    std::string out, line;
    while (std::getline(in, line))
      if (line.rfind("  IO depths", 0) != 0 && line.rfind("     ", 0) != 0) out += line + "\n";
    return out;
  };
  CHECK(heads(false) ==
        "a: (groupid=0, jobs=1): vcpu0\n"
        "  read: IOPS=500.0k, BW=1953.1MiB/s (2048.0MB/s) (1000 I/Os in 2000.0 us simulated)\n"
        "a: (groupid=0, jobs=1): vcpu1\n"
        "  read: IOPS=1.00M, BW=3906.2MiB/s (4096.0MB/s) (2000 I/Os in 2000.0 us simulated)\n"
        "b: (groupid=0, jobs=1): vcpu2\n"
        "  read: IOPS=1.50M, BW=5859.4MiB/s (6144.0MB/s) (3000 I/Os in 2000.0 us simulated)\n");
  // One group: named after its first job, 6000 I/Os over the 2 ms.
  CHECK(heads(true) ==
        "a: (groupid=0, jobs=3): vcpu0,1,2\n"
        "  read: IOPS=3.00M, BW=11718.8MiB/s (12288.0MB/s) (6000 I/Os in 2000.0 us simulated)\n");
}
