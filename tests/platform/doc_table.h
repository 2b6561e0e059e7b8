// docs/metrics.md's statistics tables are checked against the groups
// themselves: the rows a run's tree gives (report::stats_table) for a group
// must be, byte for byte, the rows under the table's marker comment
// "<!-- NAME: checked by tests/platform/FILE -->".
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "nvmesim/platform/report/stats_doc.h"
#include "tests/platform/text_file.h"

namespace nvmesim::test {

// The rows of the tree's statistics table whose statistic starts with `prefix`
// ("nvme.engine.": the group and its children).
inline std::string stats_rows(const stats::GroupValues& tree, const std::string& prefix) {
  std::string table;
  std::istringstream rows(platform::report::stats_table(tree));
  for (std::string line; std::getline(rows, line);)
    if (line.rfind("| `" + prefix, 0) == 0) table += line + "\n";
  return table;
}

// The rows of docs/metrics.md's table after `marker` (its header and rule
// left out), up to the blank line that ends it; "" without the marker.
inline std::string documented_rows(const std::string& marker) {
  const std::string text = slurp(std::string(NVMESIM_SOURCE_DIR) + "/docs/metrics.md");
  const size_t from = text.find("<!-- " + marker + " -->\n");
  if (from == std::string::npos) return "";
  const size_t start = text.find("|---|---|---|\n", from) + 14;
  const size_t end = text.find("\n\n", start);
  return text.substr(start, end == std::string::npos ? end : end + 1 - start);
}

// The group's rows are non-empty and are the documented ones; when they
// differ, the expected rows go to `paste_file` (for pasting into the docs).
inline void check_documented(const stats::GroupValues& tree, const std::string& prefix, const std::string& marker,
                             const std::string& paste_file) {
  const std::string table = stats_rows(tree, prefix);
  REQUIRE_FALSE(table.empty());
  const std::string documented = documented_rows(marker);
  REQUIRE_FALSE(documented.empty());
  if (documented != table) {
    std::ofstream(paste_file) << table;
    FAIL("docs/metrics.md's rows under '" << marker << "' differ from the group (" << paste_file << "):\n" << table);
  }
}

}  // namespace nvmesim::test
