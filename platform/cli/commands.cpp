#include "nvmesim/platform/cli/commands.h"

#include <cstring>
#include <string>

#include "nvmesim/platform/cli/eventidx_cli.h"
#include "nvmesim/platform/scenario/scenarios.h"
#include "nvmesim/platform/sweep/sweep_cli.h"
#include "nvmesim/platform/timeline/timeline_html.h"
#include "nvmesim/platform/validate/validate.h"
#include "nvmesim/platform/verify/verify.h"

namespace nvmesim::platform::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"eventidx", "explain or check the EventIdx doorbell decision", run_eventidx_command},
      {"sweep", "run a grid of experiments in parallel, CSV and plots", run_sweep_command},
      {"scenario", "rebuild a published experiment: reported vs simulated figures", run_scenario_command},
      {"validate", "check the model against a real system's measured reference rows",
       run_validate_command},
      {"verify", "check every driver/device interleaving of the doorbell protocol", run_verify_command},
      {"timeline-html", "a --timeline file as one self-contained HTML page (no network needed)",
       run_timeline_html_command},
  };
  return table;
}

const Command* find_command(const char* name) {
  for (const Command& c : commands())
    if (std::strcmp(c.name, name) == 0) return &c;
  return nullptr;
}

std::string commands_usage_text() {
  std::string out;
  for (const Command& c : commands()) {
    std::string left = std::string("  nvmesim ") + c.name + " ...";
    left += std::string(left.size() < 27 ? 27 - left.size() : 1, ' ');
    const std::string indent(27, ' ');
    std::string line = left;
    // Words of the summary, then the pointer to the command's own help.
    std::string words = std::string(c.summary) + " (see 'nvmesim " + c.name + " --help')";
    size_t pos = 0;
    bool first = true;
    while (pos < words.size()) {
      size_t end = words.find(' ', pos);
      // "(see 'nvmesim x --help')" stays on one line.
      if (words.compare(pos, 5, "(see ") == 0) end = std::string::npos;
      const std::string word = words.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      if (!first && line.size() + 1 + word.size() > 79) {
        out += line + "\n";
        line = indent;
        first = true;
      }
      line += (first ? "" : " ") + word;
      first = false;
      pos = end == std::string::npos ? words.size() : end + 1;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace nvmesim::platform::cli
