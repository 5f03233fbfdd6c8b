// The load harness's own HTTP/1.1 client, for what wrk does not measure:
//
//   rate   an open-loop (constant-throughput) load: every connection sends one request at a time on a fixed
//          timetable (connection c at start + c/R, then every N/R seconds), and a request's latency runs from its
//          intended send time, not from when it went out. A server that stalls makes the requests behind the stall
//          late, and their lateness is counted: coordinated omission does not hide it. A request the server has not
//          answered when the run ends counts with the time it waited so far, as does each one whose turn came while
//          its connection still waited.
//   churn  a closed loop of N slots, each opening a connection, sending one request with "Connection: close",
//          reading the whole response and closing; connections per second and the latency from connect() to the
//          end of the response.
//   closed a closed loop for throughput at high connection counts: the connections are opened first, one at a time
//          (no burst of SYNs past the server's accept queue, which wrk's all-at-once connect causes and then counts in
//          its run time), then each sends --depth requests in one write and the next batch once all are answered;
//          requests per second over exactly --duration seconds after --warmup.
//   idle   opens N keep-alive connections one after the other, one request each (so the server has set up all it
//          keeps per connection), prints "ready ...", holds them until SIGTERM or --hold seconds, then prints how
//          many the server had closed meanwhile.
//
//   loadgen MODE --port P [--host 127.0.0.1] [--path /plaintext] [--connections N] [--rate R] [--depth D]
//                [--duration S] [--warmup S] [--threads T] [--sources K] [--hold S] [--histogram FILE]
//
// --sources K spreads connections over the source addresses 127.0.0.1 ... 127.0.0.K (one address reaches at most
// the ephemeral port range, about 28,000 connections, to one server port). The request is TechEmpower's (the
// headers wrk sends in common.sh). Responses must carry a Content-Length (every server of the harness sends one
// for its endpoints); anything else counts as an error. Results go to stdout as one line of key=value pairs;
// latencies in microseconds, from a log-linear histogram with 128 steps per power of two (under 0.8 % error).
// The file descriptor limit is raised to what the connections need (the hard limit too when run as root).
// Built by the load scripts with the machine's gcc.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

#define BUFFER_SIZE 65536
#define BUCKETS (35 * 128) // values up to 2^41 ns (about 36 minutes)

enum mode { MODE_RATE, MODE_CHURN, MODE_IDLE, MODE_CLOSED };

struct options {
  enum mode mode;
  char host[64];
  int port;
  char path[256];
  int connections, threads, sources, depth;
  double rate, duration, warmup, hold;
  const char *histogram_file;
};

// ---- latency histogram ---------------------------------------------------------------------------------------

struct histogram {
  uint64_t counts[BUCKETS];
  uint64_t total, max, sum;
};

// The bucket of a value: exact below 256, then 128 steps per power of two.
static int bucket_of(uint64_t v) {
  if (v < 256) return (int)v;
  int e = 63 - __builtin_clzll(v);
  int index = (e - 7) * 128 + (int)(v >> (e - 7));
  return index < BUCKETS ? index : BUCKETS - 1;
}

// The highest value a bucket holds (reported percentiles are never below the truth).
static uint64_t bucket_top(int index) {
  if (index < 256) return (uint64_t)index;
  int e = index / 128 + 6;
  uint64_t m = (uint64_t)(index % 128 + 128);
  return ((m + 1) << (e - 7)) - 1;
}

static void record(struct histogram *h, uint64_t nanoseconds) {
  h->counts[bucket_of(nanoseconds)]++;
  h->total++;
  h->sum += nanoseconds;
  if (nanoseconds > h->max) h->max = nanoseconds;
}

static void merge(struct histogram *into, const struct histogram *from) {
  for (int i = 0; i < BUCKETS; i++) into->counts[i] += from->counts[i];
  into->total += from->total;
  into->sum += from->sum;
  if (from->max > into->max) into->max = from->max;
}

static double percentile_us(const struct histogram *h, double p) {
  if (h->total == 0) return 0;
  uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->total);
  if (rank < 1) rank = 1;
  uint64_t seen = 0;
  for (int i = 0; i < BUCKETS; i++) {
    seen += h->counts[i];
    if (seen >= rank) {
      uint64_t top = bucket_top(i);
      return (double)(top < h->max ? top : h->max) / 1000.0;
    }
  }
  return (double)h->max / 1000.0;
}

// ---- time, sockets, requests ---------------------------------------------------------------------------------

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static struct options options;
static char request[1024];
static size_t request_length;
static volatile sig_atomic_t stop_requested;

static void on_signal(int signal_number) {
  (void)signal_number;
  stop_requested = 1;
}

static void build_request(int close_connection) {
  int n = snprintf(request, sizeof request,
                   "GET %s HTTP/1.1\r\nHost: tfb-server\r\n"
                   "Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7\r\n"
                   "Connection: %s\r\n\r\n",
                   options.path, close_connection ? "close" : "keep-alive");
  if (n <= 0 || (size_t)n >= sizeof request) {
    fprintf(stderr, "path too long\n");
    exit(2);
  }
  request_length = (size_t)n;
}

// A socket toward the server from source address 127.0.0.(1 + source), non-blocking, connect started.
// Returns the descriptor, or -1 with errno set.
static int start_connect(int source, int blocking) {
  int fd = socket(AF_INET, SOCK_STREAM | (blocking ? 0 : SOCK_NONBLOCK), 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (options.sources > 1) {
    // The port is chosen at connect(), per destination, instead of at bind(), so each source address gets its own range.
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001u + (uint32_t)source)};
    if (bind(fd, (struct sockaddr *)&from, sizeof from) < 0) {
      int saved = errno;
      close(fd);
      errno = saved;
      return -1;
    }
  }
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)options.port)};
  if (inet_pton(AF_INET, options.host, &to.sin_addr) != 1) {
    fprintf(stderr, "--host must be an IPv4 address\n");
    exit(2);
  }
  if (connect(fd, (struct sockaddr *)&to, sizeof to) < 0 && errno != EINPROGRESS) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

// Looks for one whole response at the start of buffer[0, length). Returns its length, 0 if more bytes are needed,
// -1 if it is not a response this client can frame (no Content-Length, or a head too long).
static long response_length(const char *buffer, size_t length, int *status) {
  const char *end = memmem(buffer, length, "\r\n\r\n", 4);
  if (end == NULL) return length >= BUFFER_SIZE ? -1 : 0;
  size_t head = (size_t)(end - buffer) + 4;
  if (head < 12 || memcmp(buffer, "HTTP/1.", 7) != 0) return -1;
  *status = (buffer[9] - '0') * 100 + (buffer[10] - '0') * 10 + (buffer[11] - '0');
  long body = -1;
  for (const char *line = memchr(buffer, '\n', head); line != NULL && line + 1 < end; line = memchr(line + 1, '\n', (size_t)(end - line))) {
    if (strncasecmp(line + 1, "content-length:", 15) == 0) {
      body = strtol(line + 16, NULL, 10);
      break;
    }
  }
  if (body < 0) return -1;
  if (head + (size_t)body > BUFFER_SIZE) return -1;
  return head + (size_t)body <= length ? (long)(head + (size_t)body) : 0;
}

static void raise_descriptor_limit(long needed) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) < 0) die("getrlimit");
  if ((long)limit.rlim_cur >= needed) return;
  if ((long)limit.rlim_max < needed) limit.rlim_max = (rlim_t)needed; // allowed as root; otherwise setrlimit fails below
  limit.rlim_cur = (rlim_t)needed;
  if (setrlimit(RLIMIT_NOFILE, &limit) < 0) {
    getrlimit(RLIMIT_NOFILE, &limit);
    fprintf(stderr, "loadgen: needs %ld file descriptors, the limit is %ld (raise ulimit -n)\n", needed, (long)limit.rlim_max);
    exit(3);
  }
}

// ---- connections and the per-thread loop -----------------------------------------------------------------------

enum state { CONNECTING, IDLE, WAITING };

struct connection {
  int fd;
  enum state state;
  int source;
  uint64_t intended; // the intended send time of the request in flight (rate) or the connect time (churn)
  uint64_t next;     // the next intended send time (rate)
  int heap_index;
  int outstanding; // answers still to come for the batch in flight (closed)
  size_t have;
  char buffer[BUFFER_SIZE];
};

struct worker {
  int index;
  int count; // connections of this worker
  double rate; // requests per second of this worker
  uint64_t start, measure_from, end;
  struct connection *connections;
  struct connection **heap; // idle connections by next intended send time (rate)
  int heap_size;
  int epoll;
  struct histogram histogram;
  uint64_t requests, errors, unfinished, bad_status, reconnects, connect_errors;
  int broken; // connections that failed and wait to be opened again
};

static void heap_swap(struct worker *w, int a, int b) {
  struct connection *t = w->heap[a];
  w->heap[a] = w->heap[b];
  w->heap[b] = t;
  w->heap[a]->heap_index = a;
  w->heap[b]->heap_index = b;
}

static void heap_push(struct worker *w, struct connection *c) {
  int i = w->heap_size++;
  w->heap[i] = c;
  c->heap_index = i;
  while (i > 0 && w->heap[(i - 1) / 2]->next > w->heap[i]->next) {
    heap_swap(w, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}

static struct connection *heap_pop(struct worker *w) {
  struct connection *top = w->heap[0];
  w->heap[0] = w->heap[--w->heap_size];
  w->heap[0]->heap_index = 0;
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < w->heap_size && w->heap[l]->next < w->heap[m]->next) m = l;
    if (r < w->heap_size && w->heap[r]->next < w->heap[m]->next) m = r;
    if (m == i) break;
    heap_swap(w, i, m);
    i = m;
  }
  top->heap_index = -1;
  return top;
}

static void watch(struct worker *w, struct connection *c, int operation, uint32_t events) {
  struct epoll_event e = {.events = events, .data.ptr = c};
  if (epoll_ctl(w->epoll, operation, c->fd, &e) < 0) die("epoll_ctl");
}

// Rate and idle connections are opened blocking, one at a time: nothing is in the server's accept queue but the one.
static int open_blocking(struct worker *w, struct connection *c) {
  for (int attempt = 0; attempt < 3; attempt++) {
    int fd = start_connect(c->source, 1);
    if (fd >= 0) {
      int flags = fcntl(fd, F_GETFL);
      fcntl(fd, F_SETFL, flags | O_NONBLOCK);
      c->fd = fd;
      c->have = 0;
      return 0;
    }
    w->connect_errors++;
    usleep(10000);
  }
  return -1;
}

static void fail(struct worker *w, struct connection *c) {
  w->errors++;
  w->broken++;
  epoll_ctl(w->epoll, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  c->fd = -1;
}

// Waits for events until `until` (monotonic ns) at the latest; 0 on a timeout or a signal.
static int wait_events(struct worker *w, struct epoll_event *events, int capacity, uint64_t until) {
  uint64_t now = now_ns();
  uint64_t wait = until > now ? until - now : 0;
  struct timespec timeout = {.tv_sec = (time_t)(wait / 1000000000u), .tv_nsec = (long)(wait % 1000000000u)};
  int ready = epoll_pwait2(w->epoll, events, capacity, &timeout, NULL);
  if (ready < 0 && errno != EINTR) die("epoll_pwait2");
  return ready < 0 ? 0 : ready;
}

static int send_request(struct connection *c) {
  // A request of a few hundred bytes goes out whole on a connected socket with an empty send buffer.
  ssize_t n = send(c->fd, request, request_length, MSG_NOSIGNAL);
  return n == (ssize_t)request_length ? 0 : -1;
}

// Reads what is there; returns the number of whole responses consumed (0 or 1 for one request in flight), -1 on
// failure or a response this client cannot frame, -2 when the server closed the connection.
static int read_responses(struct worker *w, struct connection *c) {
  ssize_t n = read(c->fd, c->buffer + c->have, BUFFER_SIZE - c->have);
  if (n == 0) return -2;
  if (n < 0) return errno == EAGAIN ? 0 : -1;
  c->have += (size_t)n;
  int status = 0;
  long length = response_length(c->buffer, c->have, &status);
  if (length <= 0) return (int)length;
  if (status < 200 || status > 299) w->bad_status++;
  if ((size_t)length != c->have) return -1; // bytes past the one response this connection asked for
  c->have = 0;
  return 1;
}

static void rate_loop(struct worker *w) {
  double interval = (double)w->count / w->rate * 1e9;
  for (int i = 0; i < w->count; i++) {
    struct connection *c = &w->connections[i];
    if (open_blocking(w, c) < 0) die("connect");
    watch(w, c, EPOLL_CTL_ADD, EPOLLIN);
    c->state = IDLE;
    c->next = w->start + (uint64_t)((double)i / w->rate * 1e9);
    heap_push(w, c);
  }
  struct epoll_event events[512];
  uint64_t k_interval = (uint64_t)interval;
  for (;;) {
    uint64_t now = now_ns();
    if (now >= w->end || stop_requested) break;
    while (w->heap_size > 0 && w->heap[0]->next <= now) {
      struct connection *c = heap_pop(w);
      c->intended = c->next;
      c->next += k_interval;
      if (send_request(c) < 0) {
        fail(w, c);
        continue;
      }
      c->state = WAITING;
    }
    uint64_t until = w->heap_size > 0 && w->heap[0]->next < w->end ? w->heap[0]->next : w->end;
    int ready = wait_events(w, events, 512, until);
    uint64_t done = ready > 0 ? now_ns() : 0;
    for (int i = 0; i < ready; i++) {
      struct connection *c = events[i].data.ptr;
      if (c->fd < 0) continue;
      int got = read_responses(w, c);
      if (got == 0) continue;
      if (got < 0 || c->state != WAITING) {
        fail(w, c);
        continue;
      }
      if (c->intended >= w->measure_from) {
        record(&w->histogram, done - c->intended);
        w->requests++;
      }
      c->state = IDLE;
      heap_push(w, c);
    }
    // A connection that failed is opened again and keeps its timetable; the request it lost counts as an error.
    for (int i = 0; w->broken > 0 && i < w->count; i++) {
      struct connection *c = &w->connections[i];
      if (c->fd >= 0) continue;
      if (open_blocking(w, c) < 0) continue;
      w->broken--;
      w->reconnects++;
      watch(w, c, EPOLL_CTL_ADD, EPOLLIN);
      c->state = IDLE;
      heap_push(w, c);
    }
  }
  // Requests still unanswered, and those whose turn came while their connection waited, count with their wait so far.
  uint64_t end = w->end;
  for (int i = 0; i < w->count; i++) {
    struct connection *c = &w->connections[i];
    if (c->fd >= 0 && c->state == WAITING && c->intended >= w->measure_from && c->intended < end) {
      record(&w->histogram, end - c->intended);
      w->unfinished++;
    }
    for (uint64_t t = c->next; c->fd >= 0 && c->state == WAITING && t < end; t += k_interval) {
      if (t >= w->measure_from) {
        record(&w->histogram, end - t);
        w->unfinished++;
      }
    }
    if (c->fd >= 0) close(c->fd);
  }
}

// Closed loop: a batch of `depth` requests per write, the next batch when all of them are answered.
static char *batch;
static size_t batch_length;

static int send_batch(struct connection *c) {
  ssize_t n = send(c->fd, batch, batch_length, MSG_NOSIGNAL);
  return n == (ssize_t)batch_length ? 0 : -1;
}

// Consumes every whole response in the buffer; returns how many, or -1 for one this client cannot frame.
static int consume_responses(struct worker *w, struct connection *c) {
  int count = 0;
  size_t offset = 0;
  for (;;) {
    int status = 0;
    long length = response_length(c->buffer + offset, c->have - offset, &status);
    if (length < 0) return -1;
    if (length == 0) break;
    if (status < 200 || status > 299) w->bad_status++;
    offset += (size_t)length;
    count++;
  }
  if (offset > 0) {
    memmove(c->buffer, c->buffer + offset, c->have - offset);
    c->have -= offset;
  }
  return count;
}

static void closed_loop(struct worker *w) {
  for (int i = 0; i < w->count; i++) {
    struct connection *c = &w->connections[i];
    if (open_blocking(w, c) < 0) {
      w->errors++;
      c->fd = -1;
      continue;
    }
    watch(w, c, EPOLL_CTL_ADD, EPOLLIN);
  }
  // The clock starts once every connection is open.
  uint64_t now = now_ns();
  w->measure_from = now + (w->measure_from - w->start);
  w->end = w->measure_from + (uint64_t)(options.duration * 1e9);
  for (int i = 0; i < w->count; i++) {
    struct connection *c = &w->connections[i];
    if (c->fd < 0) continue;
    if (send_batch(c) < 0) fail(w, c);
    else c->outstanding = options.depth;
  }
  struct epoll_event events[512];
  for (;;) {
    now = now_ns();
    if (now >= w->end || stop_requested) break;
    int ready = wait_events(w, events, 512, w->end);
    uint64_t done = ready > 0 ? now_ns() : 0;
    for (int i = 0; i < ready; i++) {
      struct connection *c = events[i].data.ptr;
      if (c->fd < 0) continue;
      ssize_t n = read(c->fd, c->buffer + c->have, BUFFER_SIZE - c->have);
      if (n < 0 && errno == EAGAIN) continue;
      int got = n > 0 ? (c->have += (size_t)n, consume_responses(w, c)) : -1;
      if (got < 0 || got > c->outstanding) {
        fail(w, c);
        continue;
      }
      c->outstanding -= got;
      if (done >= w->measure_from && done < w->end) w->requests += (uint64_t)got;
      if (c->outstanding == 0) {
        if (send_batch(c) < 0) fail(w, c);
        else c->outstanding = options.depth;
      }
    }
  }
  for (int i = 0; i < w->count; i++)
    if (w->connections[i].fd >= 0) close(w->connections[i].fd);
}

static void churn_begin(struct worker *w, struct connection *c) {
  for (;;) {
    int fd = start_connect(c->source, 0);
    if (fd >= 0) {
      c->fd = fd;
      c->have = 0;
      c->state = CONNECTING;
      c->intended = now_ns();
      watch(w, c, EPOLL_CTL_ADD, EPOLLOUT);
      return;
    }
    w->connect_errors++;
    if (stop_requested || now_ns() >= w->end) {
      c->fd = -1;
      return;
    }
    usleep(1000);
  }
}

static void churn_loop(struct worker *w) {
  for (int i = 0; i < w->count; i++) churn_begin(w, &w->connections[i]);
  struct epoll_event events[512];
  for (;;) {
    uint64_t now = now_ns();
    if (now >= w->end || stop_requested) break;
    int ready = wait_events(w, events, 512, w->end);
    for (int i = 0; i < ready; i++) {
      struct connection *c = events[i].data.ptr;
      if (c->state == CONNECTING) {
        int error = 0;
        socklen_t size = sizeof error;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &size);
        if (error != 0 || send_request(c) < 0) {
          w->connect_errors++;
          epoll_ctl(w->epoll, EPOLL_CTL_DEL, c->fd, NULL);
          close(c->fd);
          churn_begin(w, c);
          continue;
        }
        c->state = WAITING;
        watch(w, c, EPOLL_CTL_MOD, EPOLLIN);
        continue;
      }
      int got = read_responses(w, c);
      if (got == 0) continue;
      if (got == 1) {
        uint64_t done = now_ns();
        if (c->intended >= w->measure_from) {
          record(&w->histogram, done - c->intended);
          w->requests++;
        }
      } else {
        w->errors++;
      }
      epoll_ctl(w->epoll, EPOLL_CTL_DEL, c->fd, NULL);
      close(c->fd);
      churn_begin(w, c);
    }
  }
  for (int i = 0; i < w->count; i++)
    if (w->connections[i].fd >= 0) close(w->connections[i].fd);
}

static void *run_worker(void *argument) {
  struct worker *w = argument;
  prctl(PR_SET_TIMERSLACK, 1UL); // sleep to the nanosecond asked for, not the default 50 µs later
  w->epoll = epoll_create1(0);
  if (w->epoll < 0) die("epoll_create1");
  if (options.mode == MODE_RATE) rate_loop(w);
  else if (options.mode == MODE_CLOSED) closed_loop(w);
  else churn_loop(w);
  close(w->epoll);
  return NULL;
}

// ---- idle mode ---------------------------------------------------------------------------------------------------

static int idle_main(void) {
  int n = options.connections;
  int *fds = malloc(sizeof(int) * (size_t)n);
  char *buffer = malloc(BUFFER_SIZE);
  if (fds == NULL || buffer == NULL) die("malloc");
  struct timeval timeout = {.tv_sec = 8};
  int opened = 0;
  uint64_t started = now_ns();
  for (int i = 0; i < n && !stop_requested; i++) {
    int fd = start_connect(i % options.sources, 1);
    if (fd < 0) {
      fprintf(stderr, "loadgen: connection %d of %d: %s\n", i + 1, n, strerror(errno));
      break;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    size_t have = 0;
    int status = 0;
    long length = 0;
    if (send(fd, request, request_length, MSG_NOSIGNAL) != (ssize_t)request_length) length = -1;
    while (length == 0) {
      ssize_t got = read(fd, buffer + have, BUFFER_SIZE - have);
      if (got <= 0) {
        length = -1;
        break;
      }
      have += (size_t)got;
      length = response_length(buffer, have, &status);
    }
    if (length < 0 || status < 200 || status > 299) {
      fprintf(stderr, "loadgen: connection %d of %d got no answer\n", i + 1, n);
      close(fd);
      break;
    }
    fds[opened++] = fd;
  }
  printf("ready connections=%d asked=%d seconds_to_open=%.2f\n", opened, n, (double)(now_ns() - started) / 1e9);
  fflush(stdout);
  uint64_t until = options.hold > 0 ? now_ns() + (uint64_t)(options.hold * 1e9) : UINT64_MAX;
  while (!stop_requested && now_ns() < until) usleep(20000);
  // A connection the server closed is readable (end of stream) or in error.
  int closed = 0;
  for (int i = 0; i < opened; i++) {
    struct pollfd p = {.fd = fds[i], .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, 0) > 0) closed++;
  }
  printf("held connections=%d closed_by_server=%d\n", opened, closed);
  fflush(stdout);
  for (int i = 0; i < opened; i++) close(fds[i]);
  free(fds);
  free(buffer);
  return opened == n ? 0 : 1;
}

// ---- main ----------------------------------------------------------------------------------------------------------

static void usage(void) {
  fprintf(stderr, "usage: loadgen rate|closed|churn|idle --port P [--host A] [--path /p] [--connections N] [--rate R] [--depth D]\n"
                  "               [--duration S] [--warmup S] [--threads T] [--sources K] [--hold S] [--histogram FILE]\n");
  exit(2);
}

static void parse(int argc, char **argv) {
  if (argc < 2) usage();
  if (strcmp(argv[1], "rate") == 0) options.mode = MODE_RATE;
  else if (strcmp(argv[1], "churn") == 0) options.mode = MODE_CHURN;
  else if (strcmp(argv[1], "idle") == 0) options.mode = MODE_IDLE;
  else if (strcmp(argv[1], "closed") == 0) options.mode = MODE_CLOSED;
  else usage();
  strcpy(options.host, "127.0.0.1");
  strcpy(options.path, "/plaintext");
  options.connections = 64;
  options.threads = 1;
  options.sources = 1;
  options.duration = 10;
  options.depth = 1;
  for (int i = 2; i < argc; i++) {
    const char *name = argv[i];
    if (i + 1 >= argc) usage();
    const char *value = argv[++i];
    if (strcmp(name, "--port") == 0) options.port = atoi(value);
    else if (strcmp(name, "--host") == 0) snprintf(options.host, sizeof options.host, "%s", value);
    else if (strcmp(name, "--path") == 0) snprintf(options.path, sizeof options.path, "%s", value);
    else if (strcmp(name, "--connections") == 0) options.connections = atoi(value);
    else if (strcmp(name, "--rate") == 0) options.rate = atof(value);
    else if (strcmp(name, "--duration") == 0) options.duration = atof(value);
    else if (strcmp(name, "--warmup") == 0) options.warmup = atof(value);
    else if (strcmp(name, "--threads") == 0) options.threads = atoi(value);
    else if (strcmp(name, "--sources") == 0) options.sources = atoi(value);
    else if (strcmp(name, "--hold") == 0) options.hold = atof(value);
    else if (strcmp(name, "--depth") == 0) options.depth = atoi(value);
    else if (strcmp(name, "--histogram") == 0) options.histogram_file = value;
    else usage();
  }
  if (options.port <= 0 || options.port > 65535 || options.connections < 1 || options.threads < 1 || options.sources < 1 ||
      options.sources > 254 || options.depth < 1 || options.depth > 64 || options.duration <= 0 || options.warmup < 0 || options.path[0] != '/')
    usage();
  if (options.mode == MODE_RATE && options.rate <= 0) {
    fprintf(stderr, "rate mode needs --rate\n");
    exit(2);
  }
  if (options.threads > options.connections) options.threads = options.connections;
}

int main(int argc, char **argv) {
  parse(argc, argv);
  struct sigaction action = {.sa_handler = on_signal};
  sigaction(SIGTERM, &action, NULL);
  sigaction(SIGINT, &action, NULL);
  signal(SIGPIPE, SIG_IGN);
  raise_descriptor_limit((long)options.connections + 64);
  build_request(options.mode == MODE_CHURN);
  if (options.mode == MODE_IDLE) return idle_main();
  batch_length = request_length * (size_t)options.depth;
  batch = malloc(batch_length);
  if (batch == NULL) die("malloc");
  for (int i = 0; i < options.depth; i++) memcpy(batch + (size_t)i * request_length, request, request_length);

  int t = options.threads;
  struct worker *workers = calloc((size_t)t, sizeof *workers);
  pthread_t *ids = calloc((size_t)t, sizeof *ids);
  if (workers == NULL || ids == NULL) die("calloc");
  uint64_t start = now_ns() + 50000000u; // the timetable starts once every connection is open (rate mode opens first)
  if (options.mode == MODE_RATE) start += (uint64_t)options.connections * 200000u; // about 0.2 ms per blocking connect
  uint64_t measure_from = start + (uint64_t)(options.warmup * 1e9);
  uint64_t end = measure_from + (uint64_t)(options.duration * 1e9);
  for (int i = 0; i < t; i++) {
    struct worker *w = &workers[i];
    w->index = i;
    w->count = options.connections / t + (i < options.connections % t ? 1 : 0);
    w->rate = options.rate / t;
    w->start = start;
    w->measure_from = measure_from;
    w->end = end;
    w->connections = calloc((size_t)w->count, sizeof *w->connections);
    w->heap = calloc((size_t)w->count, sizeof *w->heap);
    if (w->connections == NULL || w->heap == NULL) die("calloc");
    for (int c = 0; c < w->count; c++) {
      w->connections[c].fd = -1;
      w->connections[c].source = (i + c * t) % options.sources;
    }
    if (pthread_create(&ids[i], NULL, run_worker, w) != 0) die("pthread_create");
  }
  struct histogram *all = calloc(1, sizeof *all);
  if (all == NULL) die("calloc");
  uint64_t requests = 0, errors = 0, unfinished = 0, bad_status = 0, reconnects = 0, connect_errors = 0;
  for (int i = 0; i < t; i++) {
    pthread_join(ids[i], NULL);
    merge(all, &workers[i].histogram);
    requests += workers[i].requests;
    errors += workers[i].errors;
    unfinished += workers[i].unfinished;
    bad_status += workers[i].bad_status;
    reconnects += workers[i].reconnects;
    connect_errors += workers[i].connect_errors;
  }
  double seconds = options.duration;
  printf("mode=%s connections=%d threads=%d target_rate=%.0f requests=%llu seconds=%.3f rate=%.1f "
         "p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f mean_us=%.1f "
         "unfinished=%llu errors=%llu non2xx=%llu reconnects=%llu connect_errors=%llu\n",
         options.mode == MODE_RATE ? "rate" : options.mode == MODE_CLOSED ? "closed" : "churn", options.connections, t, options.rate, (unsigned long long)requests,
         seconds, (double)requests / seconds, percentile_us(all, 50), percentile_us(all, 90), percentile_us(all, 99),
         percentile_us(all, 99.9), (double)all->max / 1000.0, all->total ? (double)all->sum / (double)all->total / 1000.0 : 0,
         (unsigned long long)unfinished, (unsigned long long)errors, (unsigned long long)bad_status,
         (unsigned long long)reconnects, (unsigned long long)connect_errors);
  if (options.histogram_file != NULL) {
    FILE *f = fopen(options.histogram_file, "w");
    if (f == NULL) die(options.histogram_file);
    fprintf(f, "# percentile latency_us (requests %llu)\n", (unsigned long long)all->total);
    static const double points[] = {0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 92.5, 95, 96, 97, 98, 99, 99.5, 99.9, 99.95, 99.99, 99.999};
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) fprintf(f, "%g %.1f\n", points[i], percentile_us(all, points[i] == 0 ? 0.0001 : points[i]));
    fprintf(f, "100 %.1f\n", (double)all->max / 1000.0);
    fclose(f);
  }
  return 0;
}
