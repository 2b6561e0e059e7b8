/* What one eventfd write() costs the thread that makes it: the price of an
 * irqfd MSI (QEMU's virtio_notify_irqfd -> event_notifier_set, a write(2)
 * on the eventfd KVM's irqfd watches) on the thread that posts the
 * completion. Two cases:
 *   nosleeper: nobody waits on the eventfd (the write only bumps the count;
 *              the fd is read back between writes, untimed);
 *   sleeper:   a second thread sleeps in ppoll() on it, so each write also
 *              wakes that thread (KVM's irqfd wake-up callback does the
 *              interrupt injection work in the writer's context in the same
 *              way: eventfd_signal -> wake_up_locked_poll -> irqfd_wakeup).
 * Each sample is one write() timed with clock_gettime(CLOCK_MONOTONIC);
 * prints p50, p90, p99 in ns per case.
 *
 *   gcc -O2 -pthread -o eventfd_write_cost eventfd_write_cost.c
 *   ./eventfd_write_cost [samples]          (default 20000)
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static int efd;
static volatile int stop;
static volatile uint64_t woken; /* wake-ups the sleeper took */

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *sleeper(void *arg) {
  (void)arg;
  struct pollfd p = {.fd = efd, .events = POLLIN};
  while (!stop) {
    if (ppoll(&p, 1, NULL, NULL) > 0) {
      uint64_t v;
      if (read(efd, &v, sizeof v) == sizeof v) __atomic_add_fetch(&woken, 1, __ATOMIC_RELEASE);
    }
  }
  return NULL;
}

static int cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void report(const char *name, uint64_t *s, int n) {
  qsort(s, (size_t)n, sizeof *s, cmp);
  printf("%s,%d,%llu,%llu,%llu\n", name, n, (unsigned long long)s[n / 2], (unsigned long long)s[n * 90 / 100],
         (unsigned long long)s[n * 99 / 100]);
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 20000;
  uint64_t *s = malloc(sizeof *s * (size_t)n);
  const uint64_t one = 1;
  efd = eventfd(0, EFD_NONBLOCK);
  if (efd < 0 || !s) return 1;
  printf("case,samples,p50_ns,p90_ns,p99_ns\n");

  /* Nobody waiting: the write only adds to the count. */
  for (int i = 0; i < n; ++i) {
    const uint64_t t0 = now_ns();
    if (write(efd, &one, sizeof one) != sizeof one) return 1;
    s[i] = now_ns() - t0;
    uint64_t v;
    if (read(efd, &v, sizeof v) != sizeof v) return 1; /* untimed: keep the counter low */
  }
  report("nosleeper", s, n);

  /* A thread asleep in ppoll on it: each write wakes it. The writer waits
   * (untimed) until the sleeper has read and gone back to sleep. */
  pthread_t th;
  if (pthread_create(&th, NULL, sleeper, NULL)) return 1;
  usleep(10000);
  for (int i = 0; i < n; ++i) {
    const uint64_t before = __atomic_load_n(&woken, __ATOMIC_ACQUIRE);
    const uint64_t t0 = now_ns();
    if (write(efd, &one, sizeof one) != sizeof one) return 1;
    s[i] = now_ns() - t0;
    while (__atomic_load_n(&woken, __ATOMIC_ACQUIRE) == before) {
    }
    usleep(50); /* let it sleep again in ppoll */
  }
  report("sleeper", s, n);
  stop = 1;
  if (write(efd, &one, sizeof one) != sizeof one) return 1;
  pthread_join(th, NULL);
  return 0;
}
