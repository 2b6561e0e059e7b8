// What the model refuses (more jobs than I/O queues) is refused before validate,
// scenario or sweep runs anything: exit 2, one line naming the row or point,
// within seconds (a calibration takes minutes). Generated: each such value
// in each column of the real-system reference and of the published figures
// (in the first row, the last, or every row), and the same values as a
// scenario's --set and as a sweep's grid or fixed options.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "run_binary.h"
#include "temp_dir.h"
#include "text_file.h"

using nvmesim::test::run_nvmesim;

namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

// `csv` with `column` set to `value` in the rows `which` picks (0 first, 1
// last, 2 every row).
std::string with_value(const std::string& csv, const std::string& column, const std::string& value, int which) {
  const auto lines = nvmesim::test::text_lines(csv);
  const std::vector<std::string> names = split(lines.at(0));
  size_t col = 0;
  while (col < names.size() && names[col] != column) ++col;
  REQUIRE(col < names.size());
  std::string out = lines[0] + "\n";
  size_t last = lines.size() - 1;
  while (last > 1 && lines[last].empty()) --last;
  for (size_t k = 1; k <= last; ++k) {
    std::vector<std::string> cells = split(lines[k]);
    if (which == 2 || (which == 0 && k == 1) || (which == 1 && k == last)) cells.at(col) = value;
    for (size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + cells[c];
    out += "\n";
  }
  return out;
}

size_t count_lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("up-front refusals: a row, run or point the model refuses stops validate, scenario and sweep before "
          "anything runs",
          "[validate][scenario][sweep][binary]") {
  nvmesim::test::TempDir d("nvmesim_upfront", "");
  const std::string src = NVMESIM_SOURCE_DIR;
  struct Value {
    const char* column;
    const char* value;
    const char* extra;  // options that make the value one the model refuses
    const char* says;   // in the message
  };
  const std::vector<Value> values = {
      // (An iodepth above the I/O queue's tags, or I/Os split at MDTS into
      // more commands than the tags, run: their submissions wait for tags.)
      {"numjobs", "8", "--set nvme.max_io_queues=4", "--numjobs: 8"},
      {"numjobs", "3", "--set nvme.max_io_queues=2", "--numjobs: 3"},
  };
  size_t cases = 0;
  std::map<std::string, int> model_refusals;
  for (const std::string table : {"/validation/qemu/results.csv", "/validation/published/figures.csv"}) {
    const std::string csv = nvmesim::test::slurp(src + table);
    for (const Value& v : values)
      for (int which : {0, 1, 2}) {
        // A row's iodepth changed alone loses its iodepth=1 row (refused
        // for that); so the first row, an iodepth=1 row, changes alone
        // only where that does not matter.
        const std::string file = d / ("t" + std::to_string(cases) + ".csv");
        std::ofstream(file) << with_value(csv, v.column, v.value, which);
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = run_nvmesim("validate " + file + " " + v.extra);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        INFO(table << " " << v.column << "=" << v.value << " in row " << which << " " << v.extra << "\n" << r.err);
        ++cases;
        CHECK(r.exit_code == 2);
        CHECK(count_lines(r.err) == 1);
        CHECK(r.err.find("nvmesim validate: error: ") == 0);
        CHECK(r.out.empty());
        CHECK(seconds < 20);  // refused before the calibration, which takes minutes
        // The message names the row (its line); a variant the table's own
        // checks let through (not a row that lost its iodepth=1 row or
        // became another's twin) is refused for the model's reason.
        CHECK(r.err.find("line ") != std::string::npos);
        model_refusals[v.says] += r.err.find(v.says) != std::string::npos;
      }
  }
  CHECK(cases == 12);
  for (const Value& v : values) {
    INFO(v.says);
    CHECK(model_refusals[v.says] >= 2);  // in both tables
  }
  // The same values as a scenario's what-if and a sweep's grid or fixed options.
  for (const Value& v : values) {
    std::string set = std::string("--set ") + v.column + "=" + (std::string(v.column) == "bs" ? "1m" : v.value);
    if (*v.extra) set += std::string(" ") + v.extra;
    const auto s = run_nvmesim("scenario qemu-vendor " + set);
    INFO("scenario qemu-vendor " << set << "\n" << s.err);
    CHECK(s.exit_code == 2);
    CHECK(count_lines(s.err) == 1);
    CHECK(s.err.find(v.says) != std::string::npos);
    const std::string value = std::string(v.column) == "bs" ? "1m" : v.value;
    std::string fixed = *v.extra ? std::string(" ") + v.extra : "";  // "--set X=V" as the option --X=V
    for (size_t at; (at = fixed.find("--set ")) != std::string::npos;) fixed.replace(at, 6, "--");
    for (const std::string& grid :
         {std::string(v.column) + "=" + value, std::string(v.column) == "bs" ? "bs=4k,1m" : std::string(v.column) + "=1," + value}) {
      const std::string out = d / ("sw" + std::to_string(cases++));
      const auto w = run_nvmesim("sweep --grid " + grid + fixed + " --number_ios=100 --out " + out);
      INFO("sweep --grid " << grid << fixed << "\n" << w.err);
      CHECK(w.exit_code == 2);
      CHECK(count_lines(w.err) == 1);
      CHECK(w.err.find("nvmesim sweep: error: --grid: point ") == 0);
      CHECK(w.err.find(v.says) != std::string::npos);
      CHECK(!std::ifstream(out + "/results.csv"));
    }
  }
}
