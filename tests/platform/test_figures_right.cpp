// Figures that must be right whatever the run's scale: latency percentiles
// of a queueing backend (one server, iodepth D, latency L: the k-th I/O
// waits min(k+1, D) x L) match the exact ones within one bin at every L,
// also past fio's 17.18 s edge; and JSON iops and bw_bytes keep enough
// digits that iops x time gives back the I/Os and bw_bytes x time the bytes,
// however slow the run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_binary.h"

using nvmesim::test::run_nvmesim;

TEST_CASE("figures right: percentiles of a queueing backend at every scale", "[figures][binary]") {
  struct Case {
    std::string latency;
    double latency_ns;
    int iodepth, ios;
  };
  const std::vector<Case> cases = {{"1s", 1e9, 32, 64},  {"1s", 1e9, 16, 48},   {"100ms", 1e8, 32, 96},
                                   {"500ms", 5e8, 64, 128}, {"10us", 1e4, 8, 64}, {"1s", 1e9, 4, 40}};
  for (const Case& c : cases) {
    const std::string args = "--single-run --output-format=json --hv.wakeup=fixed --nvme.backend=latency --nvme.backend_concurrency=1 "
                             "--nvme.backend_latency=" + c.latency + " --iodepth=" + std::to_string(c.iodepth) +
                             " --number_ios=" + std::to_string(c.ios);
    INFO("nvmesim " << args);
    const auto r = run_nvmesim(args);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto& lat = j["lat_ns"];
    // The exact latencies, without the ~10 us the host and guest add.
    std::vector<double> exact;
    for (int k = 0; k < c.ios; ++k) exact.push_back(double(std::min(k + 1, c.iodepth)) * c.latency_ns);
    std::sort(exact.begin(), exact.end());
    const double slack = 20e3;  // ns of CPU and link time per I/O, at most
    CHECK(lat["max"].get<double>() == Approx(exact.back()).margin(slack * c.iodepth));
    for (auto it = lat["percentile"].begin(); it != lat["percentile"].end(); ++it) {
      const double p = std::stod(it.key());
      const double wanted = p / 100.0 * c.ios;
      size_t k = 0;
      while (double(k + 1) < wanted) ++k;
      const double got = it.value().get<double>();
      INFO("p" << p << " = " << got << ", exact " << exact[k]);
      CHECK(std::fabs(got - exact[k]) <= exact[k] / 64 + slack * c.iodepth);
      // Half a bin at most past the extremes (fio reports a bin's middle).
      CHECK(got <= lat["max"].get<double>() * (1 + 1.0 / 128));
      CHECK(got >= lat["min"].get<double>() * (1 - 1.0 / 128));
    }
  }
}

TEST_CASE("figures right: iops and bw_bytes give back the I/Os and bytes at any speed", "[figures][binary]") {
  for (const std::string latency : {"10us", "1ms", "100ms", "1s"})
    for (const std::string bs : {"512", "4k", "128k"}) {
      const std::string args = "--single-run --output-format=json --nvme.backend=latency --nvme.backend_concurrency=1 "
                               "--iodepth=1 --number_ios=5 --nvme.backend_latency=" + latency + " --bs=" + bs +
                               (latency == "1s" ? " --nvme.backend_bandwidth=0.001" : "");
      INFO("nvmesim " << args);
      const auto r = run_nvmesim(args);
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      const double secs = j["sim_time_ns"].get<double>() / 1e9;
      const double ios = j["ios"].get<double>();
      CHECK(ios == 5);
      CHECK(j["iops"].get<double>() > 0);
      CHECK(j["iops"].get<double>() * secs == Approx(ios).epsilon(1e-8));
      const double bytes = 5.0 * (bs == "512" ? 512 : bs == "4k" ? 4096 : 131072);
      CHECK(j["bw_bytes"].get<double>() * secs == Approx(bytes).epsilon(1e-8));
    }
}
