// `nvmesim verify`'s model: one SQ/CQ pair as the guest driver and the
// device see it, where each step is one memory access the other side can
// observe (or one store leaving a store buffer). The sequences are the
// firmware's own: the driver's publish runs fw::DbbufPublish one access at a
// time, the device's SQ pass and CQ posting run fw::DbbufDevicePass (the
// cursor Controller::process_sq and post_completions walk) one access at a
// time; its shadow loads and EventIdx stores execute the controller's own
// step code (fw::DbbufStepCode, what Controller::shadow_read_sq_tail and
// apply_sq_eventidx call) on the model's state, its MMIO doorbell checks
// come from fw::sq_tail_acceptable / fw::cq_head_acceptable and its coverage
// from fw::device_dbbuf_covers (docs/verify.md).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "nvmesim/firmware/nvme/dbbuf_device_steps.h"
#include "nvmesim/firmware/nvme/dbbuf_policy.h"
#include "nvmesim/firmware/guest/dbbuf_publish.h"
#include "nvmesim/firmware/nvme/eventidx.h"

namespace nvmesim::platform::verify {

constexpr unsigned kMaxRing = 8;           // --qsize and the CQ: 2..8 entries
constexpr unsigned kMaxCommands = 64;      // --commands
constexpr unsigned kMaxStoreBuffer = kMaxRing + 2;

// How the guest's stores reach memory.
enum class MemoryModel : uint8_t {
  X86,  // TSO: one FIFO store buffer; loads pass buffered stores; mb() drains it
  Arm,  // stores also pass each other unless a write barrier (dma_wmb) sits between
};
// The device's order of the EventIdx store and the shadow re-read after each
// command and before each CQE (device_access_order: the fw::DbbufDeviceOrder
// the device's passes walk).
enum class DeviceOrder : uint8_t {
  StoreBarrierLoad,  // the firmware's (QEMU's): EventIdx store, device_barrier(), shadow load
  StoreLoad,         // no barrier: the shadow load may pass the EventIdx store
  LoadStore,         // shadow load first, then the EventIdx store (and a barrier)
};
// A controller reset (CC.EN 1 -> 0) once in mid-run, the driver bringing the
// queues and the doorbell buffer up again.
enum class ResetMode : uint8_t {
  Off,
  Zeroed,  // the buffers are cleared before Doorbell Buffer Config (Linux since "nvme-pci: clear shadow doorbell memory on resets")
  Stale,   // the old shadow and EventIdx values stay
};

const char* to_string(MemoryModel m);
const char* to_string(DeviceOrder o);
const char* to_string(ResetMode r);

struct ModelConfig {
  uint32_t qsize = 4;         // SQ entries
  uint32_t cq_entries = 0;    // 0: qsize
  uint32_t commands = 12;     // I/Os the guest completes in a run
  uint16_t qid = 1;           // 0: the admin queue
  fw::DbbufMode dbbuf = fw::DbbufMode::Spec;
  fw::EventIdxPolicy sq_eventidx = fw::EventIdxPolicy::Echo;
  fw::EventIdxPolicy cq_eventidx = fw::EventIdxPolicy::Echo;
  fw::MmioDoorbellValue mmio_doorbell_value = fw::MmioDoorbellValue::Use;
  bool full_barrier = true;
  fw::NeedEventForm need_event = fw::NeedEventForm::Linux;
  bool admin_shadow = false;
  MemoryModel memory = MemoryModel::X86;
  DeviceOrder device_order = DeviceOrder::StoreBarrierLoad;
  ResetMode reset = ResetMode::Off;
  // Test seam: when set, replaces the driver's need_event decision (a
  // deliberately broken rule must be caught).
  bool (*need_event_override)(uint16_t eventidx, uint16_t new_idx, uint16_t old_idx) = nullptr;
  // Test seam: when set, the device walks this order instead of
  // device_order's (a mutation of the controller's order must be caught).
  const fw::DbbufDeviceOrder* order_override = nullptr;
  // Test seam: when set, the device's shadow loads and EventIdx stores run
  // this code instead of the controller's fw::kDbbufStepCode (a mutation of
  // what a step does must be caught).
  const fw::DbbufStepCode* step_code_override = nullptr;

  uint32_t cq_size() const { return cq_entries ? cq_entries : qsize; }
};

// Where a guest store goes.
enum Location : uint8_t { kShadowSq = kMaxRing, kShadowCq = kMaxRing + 1 };  // 0..7: SQ slots

struct BufferedStore {
  uint8_t location;
  uint8_t epoch;   // write barriers before it (Arm: stores of different epochs keep their order)
  uint16_t value;
};

// The whole state. Trivially copyable and compared byte-wise: always start
// from make_initial() (zeroed, padding included) and copy with memcpy.
struct State {
  // Memory both sides see.
  uint16_t shadow_sq, shadow_cq, eventidx_sq, eventidx_cq;
  uint8_t sqe[kMaxRing];        // submission number in each SQ slot (0: never written)
  uint8_t cqe_seq[kMaxRing];    // CQE: the submission number it completes
  uint8_t cqe_sqhd[kMaxRing];   // CQE: SQ Head Pointer
  uint8_t cqe_phase[kMaxRing];  // CQE: phase tag
  // The guest's store buffer, oldest first.
  BufferedStore store_buffer[kMaxStoreBuffer];
  uint8_t store_count, wmb_epoch;
  // The driver.
  uint8_t guest_pc, publishing_sq;
  fw::DbbufPublish publish;
  uint8_t sq_tail, sq_published, sq_head, cq_head, cq_published, cq_phase;
  uint8_t next_seq;      // number of the next submission (from 1)
  uint8_t expect_seq;    // the completion the driver expects next
  uint8_t completed;
  uint8_t irq_pending, reset_done;
  // The device.
  uint8_t device_pc;
  uint8_t dev_sq_head, dev_sq_tail, dev_cq_head, dev_cq_tail, dev_phase;
  uint8_t sq_kick, cq_kick, stalled, sq_parked, cq_parked, posted;
  uint8_t held;           // fetched commands whose CQE is not written (the null backend finished them)
  uint8_t fetch_seq;      // ghost: the submission the device must fetch next
  uint8_t dev_store_location, dev_store_pending;  // StoreLoad: an EventIdx store not yet visible
  uint16_t dev_store_value;
  uint8_t cq_unconsumed;  // ghost: CQEs written and not consumed
};

static_assert(std::is_trivially_copyable<State>::value, "states are copied and compared byte-wise");
// A member object's padding is not kept by its assignment or constructor, so
// the publish object must have none for the state to compare byte-wise.
static_assert(std::has_unique_object_representations_v<fw::DbbufPublish>,
              "fw::DbbufPublish must have no padding: states are compared byte-wise");

// The publish object of a driver that is not publishing (all fields zero).
inline fw::DbbufPublish cleared_publish() { return fw::DbbufPublish(0, false, fw::NeedEventForm::Linux); }

State make_initial(const ModelConfig& c);
// The order the device's passes walk: order_override, else device_order's
// (StoreBarrierLoad: the firmware's default, ControllerConfig::dbbuf_order).
fw::DbbufDeviceOrder device_access_order(const ModelConfig& c);

enum class StepKind : uint8_t {
  Submit, StoreShadow, LoadEventIdx, MmioDoorbell, TakeInterrupt, LoadCqe, Reset, Drain,
  DevStartBurst, DevFetch, DevStopBurst, DevWriteEventIdx, DevReadShadow, DevDrain,
  DevStartPosting, DevWriteCqe, DevMsix,
};

struct Step {
  StepKind kind;
  bool sq = true;       // which queue's shadow/EventIdx/doorbell
  uint16_t arg = 0;     // store-buffer index (Drain), value, slot
  std::string text;     // "driver: ..." / "device: ..."
};

enum class Property : uint8_t { None, LostWakeup, QueueOverflow, EntryTwiceOrSkipped, EventIdxAhead };
const char* to_string(Property p);

struct Successor {
  State state;
  Step step;
  Property violation = Property::None;
  std::string why;  // the violation, one line
};

// Every step enabled in `s`. `with_text`: fill Step::text (for counterexamples
// only; the search runs without it).
void successors(const State& s, const ModelConfig& c, std::vector<Successor>& out, bool with_text);
// No step is enabled and the run is not finished: a lost wake-up; `why`
// says who waits for what.
bool finished(const State& s, const ModelConfig& c);
std::string describe_stall(const State& s, const ModelConfig& c);
// For waveforms: the device is inside a burst or posting; the driver is in
// its interrupt handler.
bool device_busy(const State& s);
// The device's cursor in `s`, inside an SQ pass or a posting run (false:
// idle, or about to send the posting run's MSI-X).
bool device_pass(const State& s, const ModelConfig& c, fw::DbbufDevicePass& out);
bool driver_in_interrupt(const State& s);

}  // namespace nvmesim::platform::verify
