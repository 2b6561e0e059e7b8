#include "nvmesim/platform/config/device_backend.h"

#include "nvmesim/platform/config/params.h"

namespace nvmesim::platform {

namespace {

bool virtio_device(const Config& c) {
  const ParamRegistry& r = c.registry();
  return r.find("device") && r.find("virtio.backend") && c.text("device") == "virtio-blk";
}

}  // namespace

bool is_nvme_backend_param(const std::string& name) {
  for (const char* f : kBackendFields)
    if (name == std::string("nvme.") + f) return true;
  return false;
}

std::string backend_param(const Config& c, const std::string& field) {
  return (virtio_device(c) ? "virtio." : "nvme.") + field;
}

std::string backend_value_param(const Config& c, const std::string& field) {
  const std::string own = backend_param(c, field), old = "nvme." + field;
  if (own != old && !c.is_set(own) && c.registry().find(old) && c.is_set(old)) return old;
  return own;
}

std::vector<std::string> backend_alias_warnings(const Config& c) {
  std::vector<std::string> out;
  if (!virtio_device(c)) return out;
  for (const char* f : kBackendFields) {
    const std::string old = std::string("nvme.") + f, own = std::string("virtio.") + f;
    if (!c.registry().find(old) || !c.is_set(old)) continue;
    if (c.is_set(own))
      out.push_back("nvmesim: warning: --" + old + ": device virtio-blk reads " + own + " (set to " + c.text(own) +
                    "); the old spelling " + old + "=" + c.text(old) + " does nothing");
    else
      out.push_back("nvmesim: warning: --" + old + " with device virtio-blk sets " + own +
                    " (the old spelling; use --" + own + ")");
  }
  return out;
}

std::string backend_params_help() {
  return "Each device has its own storage backend: the NVMe controller's is\n"
         "nvme.backend, nvme.backend_latency, nvme.backend_concurrency,\n"
         "nvme.backend_bandwidth and nvme.capacity; virtio-blk's is virtio.backend,\n"
         "virtio.backend_latency, virtio.backend_concurrency, virtio.backend_bandwidth\n"
         "and virtio.capacity. With device=virtio-blk the old spellings nvme.backend*\n"
         "and nvme.capacity still set virtio-blk's when its virtio.* one is not set\n"
         "(warned); when both are set the virtio.* one wins (warned).\n";
}

}  // namespace nvmesim::platform
