#include "nvmesim/models/guest/workload.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nvmesim::models {

static uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::below(uint64_t n) {
  // Lemire's multiply-shift; the tiny bias is irrelevant for offsets.
  return uint64_t((unsigned __int128)next() * n >> 64);
}

uint64_t JobSpec::min_bs(unsigned d) const {
  fio_opt::BsSplitList split[2];
  fio_opt::BsRange range[2];
  fio_opt::parse_bssplit(bssplit_text, split);
  fio_opt::parse_bsrange(bsrange_text, range);
  if (!split[d].empty()) {
    uint64_t m = split[d][0].bs;
    for (const auto& e : split[d]) m = std::min(m, e.bs);
    return m;
  }
  return range[d].min ? range[d].min : bs;
}

uint64_t JobSpec::max_bs(unsigned d) const {
  fio_opt::BsSplitList split[2];
  fio_opt::BsRange range[2];
  fio_opt::parse_bssplit(bssplit_text, split);
  fio_opt::parse_bsrange(bsrange_text, range);
  if (!split[d].empty()) {
    uint64_t m = 0;
    for (const auto& e : split[d]) m = std::max(m, e.bs);
    return m;
  }
  return range[d].max ? range[d].max : bs;
}

Workload::Workload(const JobSpec& spec)
    : spec_(spec), rng_(spec.seed * 0x100000001B3ull + spec.job_index) {
  fio_opt::parse_bssplit(spec.bssplit_text, split_);
  fio_opt::parse_bsrange(spec.bsrange_text, range_);
  fio_opt::parse_distribution(spec.distribution_text, dist_);
  // filesetup.c __init_rand_distribution: range_size = min(min_bs[read], min_bs[write]).
  for (unsigned d = 0; d < 2; ++d) minbs_[d] = spec.min_bs(d), maxbs_[d] = spec.max_bs(d);
  range_bytes_ = std::min(minbs_[0], minbs_[1]);
  blocks_ = range_bytes_ ? spec.size / range_bytes_ : 0;
  if (spec.bs == 0 || blocks_ == 0 || std::max(spec.max_bs(0), spec.max_bs(1)) > spec.size)
    throw std::invalid_argument("bs must be > 0 and <= size");
  // io_u.c last_block: the random offsets b * ba, b below (size - (min_bs -
  // ba when larger)) / ba, so that an I/O of min_bs fits.
  if (spec.blockalign)
    for (unsigned d = 0; d < 2; ++d) {
      const uint64_t ba = spec.blockalign, over = minbs_[d] > ba ? minbs_[d] - ba : 0;
      aligned_blocks_[d] = (spec.size - over) / ba;
      if (!aligned_blocks_[d]) throw std::invalid_argument("blockalign must be <= size");
    }
  // The distribution's own generator (fio: zs->rand, gs->r), so the
  // direction and size draws do not depend on it.
  if (dist_.kind != fio_opt::Distribution::Random) {
    Rng r(spec.seed * 0x100000001B3ull + spec.job_index + 0x5A17Full);
    dist_rng_ = r;
    const uint64_t n = blocks_;
    switch (dist_.kind) {
      case fio_opt::Distribution::Zipf: {  // zipf_init, zipf_update
        zeta2_ = std::pow(1.0, dist_.value) + std::pow(0.5, dist_.value);
        const uint64_t to_gen = std::min<uint64_t>(n, 10000000ull);  // ZIPF_MAX_GEN
        for (uint64_t i = 0; i < to_gen; ++i) zetan_ += std::pow(1.0 / double(i + 1), dist_.value);
        rand_off_ = dist_rand32();
        if (dist_.center != -1) rand_off_ = uint64_t(double(n) * dist_.center);
        break;
      }
      case fio_opt::Distribution::Pareto:  // pareto_init
        pareto_pow_ = std::log(dist_.value) / std::log(1.0 - dist_.value);
        rand_off_ = dist_rand32();
        if (dist_.center != -1) rand_off_ = uint64_t(double(n) * dist_.center);
        break;
      case fio_opt::Distribution::Normal:  // gauss_init
        if (dist_.value != 0.0) {
          gauss_stddev_ = uint64_t(std::ceil(double(n) * dist_.value / 100.0));
          if (gauss_stddev_ > n / 2) gauss_stddev_ = n / 2;
        }
        rand_off_ = dist_.center == -1 ? 0 : uint64_t(int64_t(double(n) * (dist_.center - 0.5)));
        break;
      case fio_opt::Distribution::Random:
      case fio_opt::Distribution::Zoned:
        break;
    }
  }
}

bool Workload::next_is_write() {
  if (pending_dir_ < 0) {
    switch (spec_.rw) {
      case RwMode::Read:
      case RwMode::RandRead: pending_dir_ = 0; break;
      case RwMode::Write:
      case RwMode::RandWrite: pending_dir_ = 1; break;
      case RwMode::RandRw: pending_dir_ = rng_.below(100) >= spec_.rwmixread ? 1 : 0; break;
    }
  }
  return pending_dir_ == 1;
}

// io_u.c get_next_buflen: bs; bssplit's first entry (sorted by percentage)
// whose running percentage covers the draw; bsrange's minbs + maxbs * draw;
// then aligned down to minbs and capped at maxbs; drawn again until it fits.
uint64_t Workload::next_bytes(unsigned d) {
  const uint64_t minbs = minbs_[d], maxbs = maxbs_[d];
  if (minbs == maxbs) return minbs;
  const uint64_t frand_max = 0xFFFFFFFFull;  // FRAND32_MAX
  for (;;) {
    const uint64_t r = rand32();
    uint64_t buflen = 0;
    if (split_[d].empty()) {
      buflen = minbs + uint64_t(double(maxbs) * (double(r) / (double(frand_max) + 1.0)));
    } else {
      uint64_t perc = 0;
      for (const fio_opt::BsSplit& e : split_[d]) {
        if (!e.perc) continue;
        buflen = e.bs;
        perc += e.perc;
        if (r / perc <= frand_max / 100ull && next_offset_fits(buflen)) break;
      }
    }
    if ((minbs & (minbs - 1)) == 0) buflen &= ~(minbs - 1);
    else buflen -= buflen % minbs;
    if (buflen > maxbs) buflen = maxbs;
    if (next_offset_fits(buflen)) return buflen;
  }
}

// io_u.c __get_next_rand_offset_zoned: v in 1..100 picks the zone of the
// v-th access percent; the block is uniform over that zone's share of the
// region's last_block blocks of ba (blockalign, else min_bs) bytes.
uint64_t Workload::next_zoned_block(unsigned d) {
  const uint64_t ba = spec_.blockalign ? spec_.blockalign : minbs_[d];
  const uint64_t over = minbs_[d] > ba ? minbs_[d] - ba : 0;
  const uint64_t lastb = (spec_.size - over) / ba;
  const uint32_t v = 1 + uint32_t(dist_rng_.below(100));  // rand_between(zone_state, 1, 100)
  uint32_t access = 0, size_prev = 0;
  for (const fio_opt::ZoneSplit& z : dist_.zones) {
    access += z.access_perc;
    if (v <= access) {
      const uint64_t start = size_prev * lastb / 100, blocks = lastb * z.size_perc / 100;
      return start + (blocks ? rng_.below(blocks) : 0);
    }
    size_prev += z.size_perc;
  }
  return 0;  // the access percentages add up to 100: not reached
}

// The block number (in range_bytes_ units) of the next random I/O.
uint64_t Workload::next_block() {
  const uint64_t n = blocks_;
  switch (dist_.kind) {
    case fio_opt::Distribution::Random:
    case fio_opt::Distribution::Zoned:  // (next_zoned_block's)
      return rng_.below(n);
    case fio_opt::Distribution::Zipf: {  // zipf_next
      const double theta = dist_.value;
      const double alpha = 1.0 / (1.0 - theta);
      const double eta = (1.0 - std::pow(2.0 / double(n), 1.0 - theta)) / (1.0 - zeta2_ / zetan_);
      const double rand_uni = double(dist_rand32()) / double(0xFFFFFFFFu);
      const double rand_z = rand_uni * zetan_;
      uint64_t val;
      if (rand_z < 1.0) val = 1;
      else if (rand_z < 1.0 + std::pow(0.5, theta)) val = 2;
      else val = 1 + uint64_t(double(n) * std::pow(eta * rand_uni - eta + 1.0, alpha));
      val--;
      return (val * 0x61C8864680B583EBull + rand_off_) % n;  // __hash_u64
    }
    case fio_opt::Distribution::Pareto: {  // pareto_next
      const double rand = double(dist_rand32()) / double(0xFFFFFFFFu);
      const uint64_t b = uint64_t(double(n - 1) * std::pow(rand, pareto_pow_));
      return (b * 0x61C8864680B583EBull + rand_off_) % n;
    }
    case fio_opt::Distribution::Normal: {  // gauss_next
      uint64_t sum = 0;
      for (int i = 0; i < 12; ++i) sum += dist_rand32() % (n + 1);  // GAUSS_ITERS
      sum = (sum + 12 - 1) / 12;
      if (gauss_stddev_) {
        const int64_t vr = int64_t(double(gauss_stddev_) * (double(dist_rand32()) / (double(0xFFFFFFFFu) + 1.0)));
        int64_t dev = vr - int64_t(gauss_stddev_ / 2);
        while (dev + int64_t(sum) >= int64_t(n)) dev /= 2;
        sum = uint64_t(int64_t(sum) + dev);
      }
      return (sum * 0x61C8864680B583EBull + rand_off_) % n;
    }
  }
  return 0;
}

NextIo Workload::next() {
  NextIo io{};
  const unsigned d = next_is_write() ? 1 : 0;
  pending_dir_ = -1;
  io.write = d == 1;
  const bool random = spec_.rw == RwMode::RandRead || spec_.rw == RwMode::RandWrite || spec_.rw == RwMode::RandRw;
  if (random && dist_.kind == fio_opt::Distribution::Zoned) {
    next_offset_ = next_zoned_block(d) * (spec_.blockalign ? spec_.blockalign : minbs_[d]);
  } else if (random && spec_.blockalign && dist_.kind == fio_opt::Distribution::Random) {
    // fio's blockalign (init.c: random I/O only): uniform over its aligned
    // block numbers (io_u.c get_next_offset, b * td->o.ba[ddir]).
    next_offset_ = rng_.below(aligned_blocks_[d]) * spec_.blockalign;
  } else if (random && spec_.blockalign) {
    // A distribution's block (in range_bytes_ units), aligned down to ba.
    next_offset_ = next_block() * range_bytes_;
    next_offset_ -= next_offset_ % spec_.blockalign;
    if (next_offset_ + minbs_[d] > spec_.size) next_offset_ = 0;
  } else if (random) {
    next_offset_ = next_block() * range_bytes_;
    next_offset_ -= next_offset_ % minbs_[d];
    if (next_offset_ + minbs_[d] > spec_.size) next_offset_ = 0;
  } else if (next_offset_ + minbs_[d] > spec_.size) {
    next_offset_ = 0;  // the end of the region: around again
  }
  io.offset = next_offset_;
  io.bytes = uint32_t(next_bytes(d));
  if (!random) next_offset_ += io.bytes;
  return io;
}

}  // namespace nvmesim::models
