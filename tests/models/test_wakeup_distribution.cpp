// The measured wake-up delays (models/host/wakeup_distribution.h): the
// compiled-in tables are the CSV files' rows, a draw is the inverse CDF of a
// table (linear between quantiles), tables are mixed by log(idle time), and
// a sleeping HostThread under hv.wakeup=measured starts one draw after its kick.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/host/wakeup_distribution.h"

using namespace sc_core;
using namespace nvmesim::models;

namespace {

struct Row {
  double q, ns;
};

// The CSV file itself, read here independently of the generator.
std::vector<Row> csv_rows(const std::string& name) {
  std::ifstream in(std::string(NVMESIM_SOURCE_DIR) + "/validation/host/" + name);
  REQUIRE(in);
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("quantile", 0) == 0) continue;
    const size_t comma = line.find(',');
    rows.push_back({std::stod(line.substr(0, comma)), std::stod(line.substr(comma + 1))});
  }
  return rows;
}

const WakeupTable& table_at(double idle_us) {
  for (const WakeupTable& t : wakeup_tables())
    if (t.idle_ns == idle_us * 1000) return t;
  FAIL("no table at " << idle_us << " us");
  return wakeup_tables().front();
}

double row_at(const std::vector<Row>& rows, double q) {
  for (const Row& r : rows)
    if (std::fabs(r.q - q) < 1e-9) return r.ns;
  FAIL("no row at " << q);
  return 0;
}

// The sample's quantile q (nearest rank, as fio's percentiles).
double sample_quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[size_t(std::ceil(q * double(v.size()))) - 1];
}

}  // namespace

TEST_CASE("wakeup distribution: the compiled-in tables are the CSV files' rows", "[wakeup]") {
  REQUIRE(wakeup_tables().size() == 3);
  double last = 0;
  for (const WakeupTable& t : wakeup_tables()) {
    CHECK(t.idle_ns > last);  // sorted by idle time
    last = t.idle_ns;
    const std::vector<Row> rows = csv_rows(t.source);
    REQUIRE(rows.size() == t.size);
    for (size_t k = 0; k < t.size; ++k) {
      CHECK(t.quantile[k] == rows[k].q);
      CHECK(t.delay_ns[k] == rows[k].ns);
    }
  }
  CHECK(std::string(table_at(100).source) == "wakeup-idle100us.csv");
  CHECK(std::string(table_at(300).source) == "wakeup-idle300us.csv");
  CHECK(std::string(table_at(1000).source) == "wakeup-idle1000us.csv");
}

TEST_CASE("wakeup distribution: the inverse CDF is the table at its quantiles and linear between", "[wakeup]") {
  const WakeupTable& t = table_at(100);
  for (size_t k = 0; k < t.size; ++k) CHECK(wakeup_quantile_ns(t, t.quantile[k]) == t.delay_ns[k]);
  for (size_t k = 1; k < t.size; ++k) {
    const double mid = (t.quantile[k - 1] + t.quantile[k]) / 2;
    CHECK(wakeup_quantile_ns(t, mid) == Approx((t.delay_ns[k - 1] + t.delay_ns[k]) / 2).epsilon(1e-12));
    const double quarter = t.quantile[k - 1] + (t.quantile[k] - t.quantile[k - 1]) / 4;
    CHECK(wakeup_quantile_ns(t, quarter) ==
          Approx(t.delay_ns[k - 1] + (t.delay_ns[k] - t.delay_ns[k - 1]) / 4).epsilon(1e-12));
  }
}

TEST_CASE("wakeup distribution: 20000 draws at 100 us idle give the table's p50 and p99", "[wakeup]") {
  const std::vector<Row> rows = csv_rows("wakeup-idle100us.csv");
  UniformStream u(7);
  std::vector<double> draws;
  for (int i = 0; i < 20000; ++i) draws.push_back(wakeup_delay_ns(100000, u.next()));
  const double p50 = sample_quantile(draws, 0.50), p99 = sample_quantile(draws, 0.99);
  CHECK(p50 == Approx(row_at(rows, 0.50)).epsilon(0.02));  // 10.41 us
  CHECK(std::fabs(p50 - 10400) < 0.02 * 10400);           // the header's p50_us=10.4
  // p99 sits where the tail rises steeply (0.98: 21.3 us, 0.99: 30.3 us,
  // 0.995: 38.5 us): 20000 draws put it between the neighbouring rows.
  CHECK(p99 > row_at(rows, 0.98));
  CHECK(p99 < row_at(rows, 0.995));
  CHECK(p99 == Approx(row_at(rows, 0.99)).epsilon(0.25));
}

TEST_CASE("wakeup distribution: tables are mixed by log(idle time) at the same quantile and clamped outside",
          "[wakeup]") {
  const WakeupTable &t100 = table_at(100), &t300 = table_at(300), &t1000 = table_at(1000);
  for (double u : {0.0, 0.005, 0.25, 0.5, 0.777, 0.99, 0.9995, 1.0}) {
    INFO("u = " << u);
    const double q100 = wakeup_quantile_ns(t100, u), q300 = wakeup_quantile_ns(t300, u),
                 q1000 = wakeup_quantile_ns(t1000, u);
    // At a table's own idle time, that table.
    CHECK(wakeup_delay_ns(100000, u) == q100);
    CHECK(wakeup_delay_ns(300000, u) == Approx(q300).epsilon(1e-12));
    CHECK(wakeup_delay_ns(1000000, u) == q1000);
    // Clamped: below 100 us the 100 us table, above 1000 us the 1000 us one.
    CHECK(wakeup_delay_ns(0, u) == q100);
    CHECK(wakeup_delay_ns(20000, u) == q100);
    CHECK(wakeup_delay_ns(5e6, u) == q1000);
    CHECK(wakeup_delay_ns(1e9, u) == q1000);
    // sqrt(100 x 300) us is halfway in log: the mean of the two tables.
    CHECK(wakeup_delay_ns(std::sqrt(100.0 * 300.0) * 1000, u) == Approx((q100 + q300) / 2).epsilon(1e-9));
    // 300 x 10^(1/4) us: a quarter of the way from 300 to 1000 in log
    // (log(1000/300) / 4 above 300).
    const double quarter = 300000 * std::pow(1000.0 / 300.0, 0.25);
    CHECK(wakeup_delay_ns(quarter, u) == Approx(0.75 * q300 + 0.25 * q1000).epsilon(1e-9));
  }
  // As an sc_time.
  CHECK(wakeup_draw(sc_time(100, SC_US), 0.5) == sc_time(10410, SC_NS));
  CHECK(wakeup_draw(sc_time(2, SC_MS), 0.5) == sc_time(49213, SC_NS));
}

TEST_CASE("wakeup distribution: a uniform stream is the same for the same seed and lies above 0 up to 1", "[wakeup]") {
  UniformStream a(5), b(5), c(6);
  std::vector<double> x, y, z;
  for (int i = 0; i < 100; ++i) {
    x.push_back(a.next());
    y.push_back(b.next());
    z.push_back(c.next());
  }
  CHECK(x == y);
  CHECK(x != z);
  for (double v : x) {
    CHECK(v > 0);
    CHECK(v <= 1);
  }
}

TEST_CASE("wakeup distribution: a sleeping measured host thread starts one draw at its idle time after the kick",
          "[wakeup][host_thread]") {
  HostThread::Params p;
  p.wakeup = WakeupModel::Measured;
  p.dispatch_latency = sc_time(7, SC_US);  // not read under measured
  p.jitter_seed = 11;
  HostThread t("t", p);
  std::vector<sc_time> starts;
  t.set_work([&](sc_time& local) {
    starts.push_back(sc_time_stamp());
    local += sc_time(1, SC_US);
  });
  struct Kicker : sc_module {
    HostThread& th;
    SC_HAS_PROCESS(Kicker);
    Kicker(sc_module_name n, HostThread& x) : sc_module(n), th(x) { SC_THREAD(run); }
    void run() {
      wait(sc_time(150, SC_US));  // asleep since 0: 150 us idle
      th.kick(SC_ZERO_TIME);
      wait(sc_time(850, SC_US));  // asleep since the work ended
      th.kick(SC_ZERO_TIME);
    }
  } k("k", t);
  sc_start(sc_time(3, SC_MS));
  // The same stream, drawn here: one uniform per sleep.
  UniformStream u(11);
  const sc_time first = sc_time(150, SC_US) + wakeup_draw(sc_time(150, SC_US), u.next());
  REQUIRE(starts.size() == 2);
  CHECK(starts[0] == first);
  const sc_time slept_from = first + sc_time(1, SC_US);  // the work's end
  const sc_time kick2 = sc_time(1000, SC_US);
  CHECK(starts[1] == kick2 + wakeup_draw(kick2 - slept_from, u.next()));
  CHECK(t.wakeups_from_sleep() == 2);
}
