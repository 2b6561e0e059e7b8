// wakeup_probe: how long a sleeping thread waits for a core on this host
// while N other threads keep the cores busy, the situation of QEMU's main
// loop (asleep in ppoll on an eventfd) when TCG vCPU threads run guest code.
//
// SPINNERS threads spin; spinner 0 also signals the sleeper's eventfd at
// pseudo-random intervals (WORK_US x U[0.5, 1.5), like a vCPU writing a
// doorbell every few hundred microseconds of guest code) and records when.
// The sleeper waits in ppoll, as QEMU's main loop does (util/main-loop.c
// os_host_main_loop_wait -> qemu_poll_ns), reads the eventfd, records the
// delay from signal to wake-up, does HANDLER_US of work (the BHs of one
// request) and sleeps again. Prints the delay distribution.
//
// Build and run (validation/qemu/run.sh does this with the harness's nice):
//   gcc -O2 -pthread -o wakeup_probe wakeup_probe.c
//   ./wakeup_probe SPINNERS SAMPLES WORK_US HANDLER_US [table]
// With `table` it also prints the whole distribution as CSV (quantile,
// delay_ns at every 1% from 0 to 99%, then 99.5%, 99.9% and the maximum):
// the empirical table a model draws its wake-ups from
// (validation/host/wakeup-*.csv, models/host/wakeup_distribution.h).
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static int efd;
static volatile int stop;
static volatile uint64_t signalled_at;  // ns, written by spinner 0 before the eventfd write
static unsigned samples, work_us, handler_us;
static uint64_t* delays;
static volatile unsigned taken;
static volatile int pending;  // a signal the sleeper has not timed yet

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void spin_for(uint64_t ns) {
  const uint64_t end = now_ns() + ns;
  while (now_ns() < end && !stop) {
  }
}

static void* spinner(void* arg) {
  const int signaller = arg != NULL;
  uint64_t rng = 0x9E3779B97F4A7C15u;
  while (!stop) {
    if (!signaller) {
      spin_for(1000000);
      continue;
    }
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;  // xorshift64
    const uint64_t interval = (uint64_t)work_us * 1000u / 2u + rng % ((uint64_t)work_us * 1000u);
    spin_for(interval);
    if (pending) continue;  // one signal at a time, so each delay pairs with its own signal
    if (taken >= samples) {
      stop = 1;
      break;
    }
    pending = 1;
    signalled_at = now_ns();
    const uint64_t one = 1;
    if (write(efd, &one, sizeof one) != sizeof one) abort();
  }
  return NULL;
}

static void* sleeper(void* arg) {
  (void)arg;
  struct pollfd p = {.fd = efd, .events = POLLIN};
  while (!stop) {
    struct timespec limit = {0, 100000000};  // 100 ms, so a finished run ends
    if (ppoll(&p, 1, &limit, NULL) <= 0) continue;
    const uint64_t woke = now_ns();
    uint64_t count;
    if (read(efd, &count, sizeof count) != sizeof count) abort();
    if (taken < samples) delays[taken] = woke - signalled_at, taken = taken + 1;
    pending = 0;
    spin_for((uint64_t)handler_us * 1000u);
  }
  return NULL;
}

static int by_value(const void* a, const void* b) {
  const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc != 5 && !(argc == 6 && strcmp(argv[5], "table") == 0)) {
    fprintf(stderr, "usage: %s SPINNERS SAMPLES WORK_US HANDLER_US [table]\n", argv[0]);
    return 2;
  }
  const int spinners = atoi(argv[1]);
  samples = (unsigned)atoi(argv[2]);
  work_us = (unsigned)atoi(argv[3]);
  handler_us = (unsigned)atoi(argv[4]);
  if (spinners < 1 || spinners > 64 || samples < 10 || work_us < 2) {
    fprintf(stderr, "%s: SPINNERS 1..64, SAMPLES >= 10, WORK_US >= 2\n", argv[0]);
    return 2;
  }
  delays = calloc(samples, sizeof *delays);
  efd = eventfd(0, 0);
  pthread_t s, t[64];
  pthread_create(&s, NULL, sleeper, NULL);
  for (int i = 0; i < spinners; ++i) pthread_create(&t[i], NULL, spinner, i == 0 ? (void*)1 : NULL);
  for (int i = 0; i < spinners; ++i) pthread_join(t[i], NULL);
  stop = 1;
  pthread_join(s, NULL);
  qsort(delays, taken, sizeof *delays, by_value);
  double sum = 0;
  unsigned over50 = 0;
  for (unsigned i = 0; i < taken; ++i) sum += (double)delays[i], over50 += delays[i] > 50000;
  printf("spinners=%d samples=%u work_us=%u handler_us=%u mean_us=%.1f over50us=%.3f", spinners, taken, work_us,
         handler_us, sum / taken / 1000.0, (double)over50 / taken);
  const int pct[] = {10, 25, 50, 75, 90, 95, 99};
  for (unsigned i = 0; i < sizeof pct / sizeof *pct; ++i)
    printf(" p%d_us=%.1f", pct[i], (double)delays[(size_t)(taken - 1) * pct[i] / 100] / 1000.0);
  printf(" max_us=%.1f\n", (double)delays[taken - 1] / 1000.0);
  if (argc == 6) {
    printf("quantile,delay_ns\n");
    for (int q = 0; q < 100; ++q) printf("%.3f,%llu\n", q / 100.0, (unsigned long long)delays[(size_t)(taken - 1) * q / 100]);
    printf("0.995,%llu\n", (unsigned long long)delays[(size_t)((taken - 1) * 0.995)]);
    printf("0.999,%llu\n", (unsigned long long)delays[(size_t)((taken - 1) * 0.999)]);
    printf("1.000,%llu\n", (unsigned long long)delays[taken - 1]);
  }
  return 0;
}
