// The effective configuration as an INI file (--dump-config), and a run's
// JSON document's "config" block read back as one (--config run.json).
#pragma once

#include <string>

#include "nvmesim/platform/config/params.h"

namespace nvmesim::platform {

// Every parameter, one line each, grouped by component ([hv], [nvme], ...;
// fio's workload names first, without a section). What the run set (its
// options, --config files and presets, expanded) is an active line; a
// parameter left at its default is a ';' comment with that default, so
// reading the file back with --config sets exactly what the run set and the
// run is the same, byte for byte. `header` lines are written as '#'
// comments first.
std::string config_ini_text(const Config& config, const std::string& header);

// A run's --output-format=json document (or its "config" object alone) as
// INI text for Config::load_ini: the values that differ from their defaults,
// and nvme.dbbuf always (a single run's document was one run at that value).
// A comparison's document ("runs": its two runs, buffer off and on) gives
// its shared configuration without nvme.dbbuf, so it runs the comparison
// again. Throws ConfigError naming `source` for a document that is not one
// of these, or whose comparison runs differ in more than nvme.dbbuf.
std::string json_config_as_ini(const std::string& json_text, const std::string& source,
                               const ParamRegistry& registry = ParamRegistry::builtin());

// Whether a --config file's text is JSON (its first character other than
// white space is '{').
bool looks_like_json(const std::string& text);

}  // namespace nvmesim::platform
