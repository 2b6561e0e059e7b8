// A virtio-blk configuration for platform tests: the device on a null
// backend, with the given settings on top, validated.
#pragma once

#include <utility>
#include <vector>

#include "nvmesim/platform/config/params.h"

namespace nvmesim::test {

using Settings = std::vector<std::pair<const char*, const char*>>;

inline platform::Config virtio_config(const Settings& settings) {
  platform::Config c;
  c.set("device", "virtio-blk");
  c.set("virtio.backend", "null");
  for (const auto& [k, v] : settings) c.set(k, v);
  c.validate_all();
  return c;
}

}  // namespace nvmesim::test
