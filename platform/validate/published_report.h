// What `nvmesim validate` prints for published figures: per source its
// citation, setup, presets, fitted costs and a line per row (each point:
// published / model, * when out of band), then the share in band per source
// and overall; or the same as JSON.
#pragma once

#include <ostream>
#include <string>

#include "nvmesim/platform/validate/published.h"

namespace nvmesim::platform {

void write_published_text(const std::string& file, const PublishedResult& result, std::ostream& out);
void write_published_json(const std::string& file, const PublishedSetup& setup, const PublishedResult& result,
                          std::ostream& out);

}  // namespace nvmesim::platform
