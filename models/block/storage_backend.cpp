#include "nvmesim/models/block/storage_backend.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <sys/mman.h>

#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/sim/kernel_time.h"

using namespace sc_core;

namespace nvmesim::models {

StorageBackend::StorageBackend(sc_module_name name, const Params& params, fw::ControllerEnv& data)
    : sc_module(name), params_(params), data_(data) {
  if (params_.kind == BackendKind::Ram) {
    void* p = mmap(nullptr, params_.capacity, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    store_ = static_cast<uint8_t*>(p);
  }
  {
    std::vector<InService> reserve;
    reserve.reserve(4096);  // no allocation per I/O in the steady state
    in_service_ = decltype(in_service_)(std::greater<InService>(), std::move(reserve));
  }
  SC_HAS_PROCESS(StorageBackend);
  SC_METHOD(tick);
  sensitive << event_;
  dont_initialize();
}

StorageBackend::~StorageBackend() {
  if (store_) munmap(store_, params_.capacity);
}

uint16_t StorageBackend::move_data(const fw::IoRequest& req) {
  const uint64_t offset = req.slba * (req.nlb ? req.bytes / req.nlb : 0);
  if (offset + req.bytes > params_.capacity)
    return nvme::status_generic(nvme::sc::LBA_OUT_OF_RANGE);
  uint64_t at = offset;
  for (unsigned i = 0; i < req.segment_count; ++i) {
    const auto& seg = req.segments[i];
    const bool ok = req.opcode == nvme::io::WRITE ? data_.dma_read(fw::DmaPurpose::Data, seg.addr, store_ + at, seg.len)
                                                  : data_.dma_write(fw::DmaPurpose::Data, seg.addr, store_ + at, seg.len);
    if (!ok) return nvme::status_generic(nvme::sc::DATA_TRANSFER_ERROR);
    at += seg.len;
  }
  return nvme::STATUS_SUCCESS;
}

bool StorageBackend::submit(const fw::IoRequest& req, const sc_time& local, uint16_t* status) {
  switch (params_.kind) {
    case BackendKind::Null:
      *status = nvme::STATUS_SUCCESS;
      ++completed_;
      return true;
    case BackendKind::Ram:
      *status = req.opcode == nvme::io::FLUSH ? nvme::STATUS_SUCCESS : move_data(req);
      ++completed_;
      return true;
    case BackendKind::Latency:
      break;
  }
  const sc_time at = kernel_now() + local;
  const uint32_t bytes = req.opcode == nvme::io::FLUSH ? 0 : req.bytes;
  if (params_.concurrency && in_latency_ >= params_.concurrency) {
    waiting_.push(Waiting{req.tag, bytes});
  } else {
    start(req.tag, bytes, at);
  }
  return false;
}

sc_time StorageBackend::transfer_time(uint32_t bytes, double bandwidth_mb_s) {
  if (bandwidth_mb_s <= 0 || bytes == 0) return SC_ZERO_TIME;
  // bytes / (MB/s * 10^6) seconds = bytes * 10^6 / MB/s ps, rounded to the ps.
  return sc_time(double(uint64_t(double(bytes) * 1e6 / bandwidth_mb_s + 0.5)), SC_PS);
}

void StorageBackend::start(uint32_t tag, uint32_t bytes, const sc_time& at) {
  ++in_latency_;
  in_service_.push(InService{at + params_.latency, order_++, tag, bytes, false});
  activations::notify(event_, in_service_.top().done - kernel_now());
}

void StorageBackend::tick() {
  activations::begin(activations::BackendCompletion);
  const sc_time now = kernel_now();
  while (!in_service_.empty() && in_service_.top().done <= now) {
    const InService top = in_service_.top();
    in_service_.pop();
    if (!top.transferring) {
      // The latency is over: its slot of internal parallelism is free.
      --in_latency_;
      if (!waiting_.empty()) {
        const Waiting next = waiting_.front();
        waiting_.pop();
        start(next.tag, next.bytes, now);
      }
      const sc_time transfer = transfer_time(top.bytes, params_.bandwidth_mb_s);
      if (transfer != SC_ZERO_TIME) {  // then the channel, one request after another
        channel_free_ = std::max(channel_free_, now) + transfer;
        in_service_.push(InService{channel_free_, order_++, top.tag, top.bytes, true});
        continue;
      }
    }
    ++completed_;
    if (on_complete_) on_complete_(top.tag, nvme::STATUS_SUCCESS);
  }
  if (!in_service_.empty()) activations::notify(event_, in_service_.top().done - now);
}

void StorageBackend::reset() {
  while (!in_service_.empty()) in_service_.pop();
  while (!waiting_.empty()) waiting_.pop();
  in_latency_ = 0;
  channel_free_ = SC_ZERO_TIME;
  activations::cancel(event_);
}

}  // namespace nvmesim::models
