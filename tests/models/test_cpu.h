// A test initiator for models tests: an SC_THREAD that runs `body` and makes
// blocking 4- and 8-byte accesses through its socket, letting each access's
// delay pass (a CPU as a platform test needs one, no more).
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

namespace nvmesim::test {

struct TestCpu : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<TestCpu> socket{"socket"};
  std::function<void()> body;
  bool done = false;
  SC_HAS_PROCESS(TestCpu);
  explicit TestCpu(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void run() {
    body();
    done = true;
  }
  void access(tlm::tlm_command c, uint64_t a, void* v, unsigned n) {
    tlm::tlm_generic_payload p;
    p.set_command(c);
    p.set_address(a);
    p.set_data_ptr(static_cast<unsigned char*>(v));
    p.set_data_length(n);
    p.set_streaming_width(n);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    socket->b_transport(p, d);
    sc_core::wait(d);
  }
  uint32_t rd32(uint64_t a) { uint32_t v = 0; access(tlm::TLM_READ_COMMAND, a, &v, 4); return v; }
  void wr32(uint64_t a, uint32_t v) { access(tlm::TLM_WRITE_COMMAND, a, &v, 4); }
  void wr64(uint64_t a, uint64_t v) { access(tlm::TLM_WRITE_COMMAND, a, &v, 8); }
};

}  // namespace nvmesim::test
