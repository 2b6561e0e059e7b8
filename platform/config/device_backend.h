// The storage backend belongs to the device that uses it: the NVMe
// controller reads nvme.backend, nvme.backend_latency,
// nvme.backend_concurrency, nvme.backend_bandwidth and nvme.capacity;
// virtio-blk reads the same names under virtio. (both from
// StorageBackend::Params::visit, models/block/storage_backend.h).
//
// The old spellings stay as documented aliases: with device=virtio-blk, a
// user-set nvme.<field> whose virtio.<field> is not set applies to
// virtio-blk's backend (warned once per parameter); when both are set the
// virtio.* one wins (also warned). Values are never copied into the Config:
// a run's --dump-config and JSON "config" keep what the user wrote, and read
// back give the same run and the same warnings.
#pragma once

#include <string>
#include <vector>

namespace nvmesim::platform {

class Config;

// The fields, as the visit lines name them under either prefix.
inline constexpr const char* kBackendFields[] = {"backend", "backend_latency", "backend_concurrency",
                                                 "backend_bandwidth", "capacity"};

// Whether `name` is one of the NVMe controller's backend parameters
// (nvme.backend, ..., nvme.capacity).
bool is_nvme_backend_param(const std::string& name);

// The name of `field` for the run's device ("nvme.capacity", or
// "virtio.capacity" with device=virtio-blk): what messages name. A
// registry without `device` or virtio.* (a library user's) has nvme.* only.
std::string backend_param(const Config& c, const std::string& field);

// The parameter whose value the run reads for `field`: backend_param, or
// with device=virtio-blk the old spelling nvme.<field> when the user set it
// and not virtio.<field>.
std::string backend_value_param(const Config& c, const std::string& field);

// With device=virtio-blk, one warning line ("nvmesim: warning: ...") for
// each nvme.<field> the user set: the old spelling applied, or ignored
// because virtio.<field> is set too. None otherwise.
std::vector<std::string> backend_alias_warnings(const Config& c);

// --help's paragraph on the backend's parameters and the old spellings.
std::string backend_params_help();

}  // namespace nvmesim::platform
