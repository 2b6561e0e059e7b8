// The installed command's man page and bash completion (generated at build
// time from nvmesim's own help texts by scripts/nvmesim_docs.py) cover
// every option and parameter the command has, and the completion offers
// exactly each choice parameter's values; --version names the commit.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/platform/run_binary.h"
#include "tests/platform/text_file.h"

using nvmesim::test::run_nvmesim;
using nvmesim::test::slurp;

namespace {

const std::string kMan = NVMESIM_BUILD_DIR "/share/man/man1/nvmesim.1";
const std::string kCompletion = NVMESIM_BUILD_DIR "/share/bash-completion/completions/nvmesim";

// name -> RANGE/CHOICES, from --list-params (read by its header's columns).
std::map<std::string, std::string> list_params() {
  const auto r = run_nvmesim("--list-params");
  REQUIRE(r.exit_code == 0);
  std::istringstream in(r.out);
  std::string header, line;
  std::getline(in, header);
  const size_t range = header.find("RANGE/CHOICES"), help = header.find("HELP");
  std::map<std::string, std::string> params;
  while (std::getline(in, line)) {
    if (line.size() < help) continue;
    std::string name = line.substr(0, line.find(' '));
    std::string rng = line.substr(range, help - range);
    rng.erase(rng.find_last_not_of(' ') + 1);
    params[name] = rng;
  }
  return params;
}

std::string roff_option(const std::string& name) {
  std::string out = "\\-\\-";
  for (char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

}  // namespace

TEST_CASE("installed command: --version names the version and the commit", "[cli][binary]") {
  const auto r = run_nvmesim("--version");
  CHECK(r.exit_code == 0);
  CHECK(std::regex_match(r.out, std::regex("nvmesim [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ([0-9a-f]{7,40}(-dirty)?|unknown)\\)\n")));
}

TEST_CASE("installed command: the man page lists every parameter and every option of --help", "[cli][binary]") {
  const std::string man = slurp(kMan);
  REQUIRE(!man.empty());
  const auto params = list_params();
  CHECK(params.size() > 100);
  for (const auto& [name, rng] : params) {
    INFO(name);
    CHECK(man.find("\\fB" + roff_option(name) + "\\fR") != std::string::npos);
  }
  const auto help = run_nvmesim("--help");
  const std::regex option("--[a-z][a-z0-9_.-]*[a-z0-9]");
  for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), option); it != std::sregex_iterator(); ++it) {
    INFO(it->str());
    CHECK(man.find(roff_option(it->str().substr(2))) != std::string::npos);
  }
  for (const char* sub : {"eventidx", "sweep", "scenario", "validate", "verify", "timeline-html"}) {
    INFO(sub);
    CHECK(man.find(std::string(".SS nvmesim ") + (std::string(sub) == "timeline-html" ? "timeline\\-html" : sub)) !=
          std::string::npos);
  }
}

TEST_CASE("installed command: bash completes subcommands, options and each choice parameter's values",
          "[cli][binary]") {
  const auto params = list_params();
  // One bash: the completion function on each word, its replies one line each.
  std::string script = "source '" + kCompletion + "'\n"
                       "c() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _nvmesim; echo \"${COMPREPLY[*]}\"; }\n"
                       "c nvmesim sw\nc nvmesim sweep --gr\nc nvmesim --nvme.dbbu\n";
  std::vector<std::string> choice_names;
  for (const auto& [name, rng] : params)
    if (rng.find('|') != std::string::npos) {
      choice_names.push_back(name);
      script += "c nvmesim --" + name + "=\n";
    }
  std::ofstream("/tmp/nvmesim_completion_test.sh") << script;
  const auto r = run_nvmesim("--version >/dev/null; bash /tmp/nvmesim_completion_test.sh");
  std::remove("/tmp/nvmesim_completion_test.sh");
  REQUIRE(r.exit_code == 0);
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  CHECK(line == "sweep");
  std::getline(in, line);
  CHECK(line == "--grid");
  std::getline(in, line);
  CHECK(line == "--nvme.dbbuf");
  for (const std::string& name : choice_names) {
    INFO(name);
    REQUIRE(std::getline(in, line));
    std::string expected, rng = params.at(name);
    for (size_t at = 0; at <= rng.size();) {
      const size_t bar = std::min(rng.find('|', at), rng.size());
      expected += (expected.empty() ? "" : " ") + ("--" + name + "=" + rng.substr(at, bar - at));
      at = bar + 1;
    }
    CHECK(line == expected);
  }
}
