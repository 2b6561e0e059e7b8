// The repository's docs stay true to the code: every parameter group is
// named in the README, every JSON key of a run is defined in docs/metrics.md.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "nvmesim/platform/config/params.h"
#include "text_file.h"

using nvmesim::test::slurp;

TEST_CASE("docs: the README names every parameter group", "[docs]") {
  const std::string readme = slurp(std::string(NVMESIM_SOURCE_DIR) + "/README.md");
  REQUIRE(!readme.empty());
  std::set<std::string> groups;
  for (const auto& spec : nvmesim::platform::ParamRegistry::builtin().all())
    if (const size_t dot = spec.name.find('.'); dot != std::string::npos) groups.insert(spec.name.substr(0, dot));
  CHECK(groups.size() >= 7);
  for (const std::string& g : groups) {
    INFO(g);
    CHECK(readme.find("`" + g + ".*`") != std::string::npos);
  }
}
