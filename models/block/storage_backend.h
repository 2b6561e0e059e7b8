// The storage behind the emulated controller (QEMU's block backend):
//  null    - completes at once, moves no data (null-co);
//  latency - completes after a fixed latency, at most `concurrency` at a time,
//            then (with a bandwidth) moves its bytes through one shared
//            channel at that rate, one request after another: an SSD's
//            media latency, its internal parallelism and its interface rate;
//  ram     - stores the data: a write then a read returns the written bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <systemc>
#include <vector>

#include "nvmesim/firmware/nvme/controller.h"
#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/sim/param_visit.h"

namespace nvmesim::models {

enum class BackendKind { Null, Latency, Ram };
inline constexpr EnumEntry<BackendKind> backend_kinds[] = {
    {BackendKind::Null, "null"}, {BackendKind::Latency, "latency"}, {BackendKind::Ram, "ram"}};
inline const char* to_string(BackendKind kind) { return enum_name(backend_kinds, kind); }

class StorageBackend : public sc_core::sc_module {
 public:
  // The backend's parameters. Each device owns its backend and visits them
  // under its own prefix (NvmeControllerModel::Params: nvme.backend,
  // nvme.backend_latency, nvme.backend_concurrency, nvme.backend_bandwidth,
  // nvme.capacity; VirtioBlkModel::Params: the same names under virtio.),
  // so the help texts name no device.
  struct Params {
    BackendKind kind{};
    sc_core::sc_time latency;
    uint32_t concurrency{};  // 0: unlimited
    double bandwidth_mb_s{};  // 10^6 bytes per second through the channel; 0: unlimited
    uint64_t capacity{};     // bytes

    template <class V>
    void visit(V& v) {
      using namespace param_units;
      v.choice(kind, "backend", "null", backend_kinds, "",
               "storage backend: null (instant), fixed latency, or RAM disk");
      v.time(latency, "backend_latency", "10us", 0, 1 * S, "backend service time per I/O");
      v.integer(concurrency, "backend_concurrency", "0", "I/Os", 0, 65536,
                "I/Os the backend serves at once (0 = unlimited)");
      v.real(bandwidth_mb_s, "backend_bandwidth", "0", "MB/s", 0, 1e6,
             "backend=latency: after its latency each I/O's data moves through one channel at "
             "this rate, one I/O at a time (10^6 bytes/s; 0 = unlimited; else at least 0.001, so that "
             "one transfer of the largest bs, 1 MiB, takes at most 1049 s)",
             ParamOptions{false, false, "", 0.001});
      v.size(capacity, "capacity", "1g", 1 * MiB, 16 * TiB,
             "device size (the NVMe namespace; virtio-blk's capacity)");
    }
  };
  // The channel time of `bytes` at `bandwidth_mb_s` (0: none), in whole ps.
  static sc_core::sc_time transfer_time(uint32_t bytes, double bandwidth_mb_s);
  using CompletionCallback = std::function<void(uint32_t tag, uint16_t status)>;

  // `data` moves the bytes of ram commands (the controller's DMA, timed).
  StorageBackend(sc_core::sc_module_name name, const Params& params, fw::ControllerEnv& data);
  ~StorageBackend() override;

  void set_completion_callback(CompletionCallback cb) { on_complete_ = std::move(cb); }
  // Starts command `req` at offset `local` from now. Returns true when it
  // finished at once (its status in *status); otherwise the completion
  // callback runs at its finish time.
  bool submit(const fw::IoRequest& req, const sc_core::sc_time& local, uint16_t* status);
  // Controller reset: forget commands in flight.
  void reset();

  // The ram backend moves each command's data itself, through the device's
  // timed DMA, so submit may wait (and let other threads run) before it
  // returns; the others leave the data's time to the device.
  bool moves_data() const { return params_.kind == BackendKind::Ram; }
  uint32_t in_flight() const { return uint32_t(in_service_.size() + waiting_.size()); }
  uint64_t completed() const { return completed_; }
  stats::Group& stats() { return stats_; }
  const Params& params() const { return params_; }
  // ram: the stored bytes from `offset` (tests corrupt one); null for the other kinds.
  uint8_t* ram_data(uint64_t offset) { return store_ ? store_ + offset : nullptr; }

 private:
  struct InService {
    sc_core::sc_time done;
    uint64_t order;  // FIFO among equal times: deterministic
    uint32_t tag;
    uint32_t bytes;     // to move through the channel after the latency
    bool transferring;  // in the channel (its latency is over)
    bool operator>(const InService& o) const {
      return done != o.done ? done > o.done : order > o.order;
    }
  };
  uint16_t move_data(const fw::IoRequest& req);
  void start(uint32_t tag, uint32_t bytes, const sc_core::sc_time& at);
  void tick();

  Params params_;
  fw::ControllerEnv& data_;
  CompletionCallback on_complete_;
  uint8_t* store_ = nullptr;  // ram: lazily mapped zero pages
  std::priority_queue<InService, std::vector<InService>, std::greater<InService>> in_service_;
  struct Waiting { uint32_t tag, bytes; };
  std::queue<Waiting> waiting_;
  sc_core::sc_time channel_free_;  // the channel is busy until then
  uint32_t in_latency_ = 0;        // requests in their latency (holding a slot)
  sc_core::sc_event event_;
  uint64_t order_ = 0;
  stats::Group stats_;
  stats::Scalar completed_{stats_, "completed", stats::Unit::Count, "requests the backend completed"};
};

}  // namespace nvmesim::models
