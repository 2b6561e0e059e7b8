// NVMe command arbitration (NVMe Base Specification 1.4, section 4.13
// "Command Arbitration"): which Submission Queue the controller fetches
// from next, and how many commands it may launch from it at once.
//
// Two mechanisms, selected by CC.AMS when the controller is enabled:
//  - Round Robin (000b, every controller): all SQs, the Admin SQ included,
//    at equal priority, each served in turn (section 4.13.1);
//  - Weighted Round Robin with Urgent Priority Class (001b, when CAP.AMS
//    bit 17 is set; section 4.13.2): three strict priority classes, Admin
//    above Urgent above the weighted round robin class, and inside that
//    class three levels, High, Medium and Low, served in each arbitration
//    round for HPW+1, MPW+1 and LPW+1 commands (the weights are 0's based),
//    round robin among the SQs of one level. An I/O SQ's level is the QPRIO
//    of its Create I/O Submission Queue command (CDW11 bits 2:1); under
//    Round Robin QPRIO is ignored.
// The Arbitration Burst (Set Features, Feature Identifier 01h "Arbitration",
// CDW11 bits 2:0) caps the commands launched from one SQ per turn at 2^AB
// (111b: no limit); under WRR a turn also ends when its level's credits for
// the round are spent ("either the Arbitration Burst setting or the
// remaining weighted round robin credits, whichever is smaller").
//
// Where the specification leaves the choice to the implementation, this
// arbiter: serves each level of a WRR round in the order High, Medium, Low;
// skips a level with no SQ holding commands (its credits lapse for that
// round), so the weighted class never idles while one of its SQs holds
// commands; starts a new round (every level's credits back to weight) when
// Low's turn is over; keeps a level's round-robin position across rounds.
// Strict priority is checked before every turn: an Admin or Urgent SQ that
// gets commands in the middle of a weighted round is served next.
//
// The arbiter keeps no time and reads no queue: its caller says which SQs
// hold commands (set_ready), asks for the next turn (next), fetches up to
// the granted count and says how many it fetched (consumed). Used by the
// controller's hardware engine (models/nvme/nvme_hw_engine.h); QEMU's
// emulation visits its SQs round robin per notification instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nvmesim::fw {

// CC.AMS (bits 13:11) values this arbiter implements.
enum class ArbitrationMechanism : uint8_t {
  RoundRobin = 0,                // 000b
  WeightedRoundRobinUrgent = 1,  // 001b (CAP.AMS bit 17)
};

// Create I/O Submission Queue CDW11 QPRIO (bits 2:1).
enum class SqPriority : uint8_t { Urgent = 0, High = 1, Medium = 2, Low = 3 };

// Feature Identifier 01h, Arbitration: the Set Features CDW11 and the Get
// Features completion dword 0 (HPW 31:24, MPW 23:16, LPW 15:8, bits 7:3
// reserved, AB 2:0).
struct ArbitrationFeature {
  static constexpr uint8_t AB_NO_LIMIT = 7;  // 111b
  uint8_t ab = AB_NO_LIMIT;  // the default, as QEMU's controller (weights 0)
  uint8_t lpw = 0;           // 0's based weights
  uint8_t mpw = 0;
  uint8_t hpw = 0;

  static constexpr ArbitrationFeature from_dword(uint32_t dw) {
    ArbitrationFeature f;
    f.ab = uint8_t(dw & 0x7);
    f.lpw = uint8_t(dw >> 8);
    f.mpw = uint8_t(dw >> 16);
    f.hpw = uint8_t(dw >> 24);
    return f;
  }
  constexpr uint32_t dword() const {
    return uint32_t(ab & 0x7) | (uint32_t(lpw) << 8) | (uint32_t(mpw) << 16) |
           (uint32_t(hpw) << 24);
  }
  // Commands one SQ may launch per turn: 2^AB, or no limit for 111b.
  static constexpr uint32_t NO_LIMIT = 0xFFFFFFFFu;
  constexpr uint32_t burst() const { return (ab & 0x7) == AB_NO_LIMIT ? NO_LIMIT : 1u << (ab & 0x7); }
};

class Arbiter {
 public:
  // One turn: SQ `sqid` may launch up to `commands` commands (0: no SQ holds
  // commands; ArbitrationFeature::NO_LIMIT: as many as it holds).
  struct Grant {
    uint16_t sqid = 0;
    uint32_t commands = 0;
    explicit operator bool() const { return commands != 0; }
  };

  // SQ ids 0 (Admin) .. queues-1, none ready, every I/O SQ at QPRIO 00b
  // (Urgent: a Create I/O SQ with CDW11 bits 2:1 clear), Round Robin, the
  // default Arbitration feature.
  explicit Arbiter(size_t queues = 1);

  // The mechanism (CC.AMS at enable) and the Arbitration feature. A WRR
  // round starts afresh (every level's credits at its weight); round-robin
  // positions are kept.
  void configure(ArbitrationMechanism mechanism, const ArbitrationFeature& feature);
  ArbitrationMechanism mechanism() const { return mechanism_; }
  const ArbitrationFeature& feature() const { return feature_; }

  // QPRIO of I/O SQ `sqid` (the Admin SQ has its own class; ignored for 0).
  void set_priority(uint16_t sqid, SqPriority priority);
  SqPriority priority(uint16_t sqid) const;

  // Whether SQ `sqid` holds commands the controller may fetch. Ids out of
  // range are ignored.
  void set_ready(uint16_t sqid, bool ready);
  bool ready(uint16_t sqid) const { return sqid < ready_.size() && ready_[sqid]; }
  bool any_ready() const { return ready_count_ > 0; }
  unsigned ready_count() const { return ready_count_; }

  // The next turn, by the selected mechanism, among the ready SQs. Asking
  // again before consumed() gives the same turn (it only moves a WRR round
  // past levels with no credits or no ready SQ); call consumed() with what
  // the turn fetched.
  Grant next();
  // The turn `grant` fetched `fetched` commands (fetched <= grant.commands):
  // the rotation moves past its SQ and, under WRR, its level's credits go
  // down by `fetched`. The caller clears the SQ's ready flag if it ran out.
  void consumed(const Grant& grant, uint32_t fetched);

  // Controller Level Reset: no SQ ready, every SQ at QPRIO 00b, the
  // rotation and the round back to their start. Mechanism and feature stay
  // (the controller configures them again).
  void reset();

 private:
  // Classes: 0 Admin, 1 Urgent, 2 High, 3 Medium, 4 Low; Round Robin uses
  // one, kAll, that holds every SQ.
  static constexpr unsigned kAdmin = 0, kUrgent = 1, kHigh = 2, kLow = 4, kAll = 5, kClasses = 6;
  unsigned class_of(uint16_t sqid) const;
  // The ready SQ of class `cls` after the class's last served one, or -1.
  int next_in_class(unsigned cls) const;
  uint32_t weight(unsigned cls) const;
  void new_round();

  ArbitrationMechanism mechanism_ = ArbitrationMechanism::RoundRobin;
  ArbitrationFeature feature_;
  std::vector<uint8_t> ready_;
  std::vector<SqPriority> priority_;
  unsigned ready_count_ = 0;
  uint16_t last_[kClasses] = {};  // last SQ served in each class (rotation position)
  uint32_t credits_[kClasses] = {};  // WRR: commands left this round for High, Medium, Low
  unsigned level_ = kHigh;           // WRR: the level whose turn it is in this round
};

}  // namespace nvmesim::fw
