// A minimal C server on io_uring for the load harness ("c-uring"): the io_uring counterpart of c-epoll, and as little
// as an io_uring HTTP/1.1 server can do and still answer wrk. It parses nothing: a connection's first bytes choose its
// canned response once ("/json" in the request line picks the JSON one, anything else the plaintext one), then every
// "\r\n\r\n" received on it is answered with one copy of that response, all the answers to one receive going out in
// one send. Responses carry Server, Date, Content-Type and Content-Length; Date is refreshed once a second.
//
// Each thread owns an SO_REUSEPORT listener and a ring set up for one thread (IORING_SETUP_SINGLE_ISSUER,
// IORING_SETUP_DEFER_TASKRUN), with every technique that saves the kernel work on this path: a multishot accept into
// the ring's registered file table (no descriptor lookup per operation afterwards), a multishot receive per connection
// into a provided-buffer ring, sends from a per-connection buffer, and one io_uring_enter per loop turn that submits
// every send of the turn and waits for the next completions. TCP_NODELAY is set on the listener, which accepted
// sockets inherit. It is a reference for the cost of the loopback path under io_uring, not an upper bound.
//
// With MIN_WAIT_US and BATCH, a turn waits for BATCH completions, or for MIN_WAIT_US microseconds once at least one is
// ready (io_uring_enter's min_wait_usec, Linux 6.12): fewer, fuller turns for a longer wait per request, the io_uring
// counterpart of a network card's interrupt coalescing ("c-uring-batch" in the harness).
//
//   c-uring PORT [THREADS [MIN_WAIT_US BATCH]]     THREADS defaults to the number of CPUs the process may run on
//
// Built by benchmarks/load/run.sh with the machine's gcc and liburing (Debian's liburing-dev); stopped with SIGTERM, which
// shuts the listeners down first: the kernel tears a ring down after the process is gone, and the pending multishot
// accept would keep the port bound until then.
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../Canned/canned.h"

#define FILES 32768    // registered file table: the most connections per thread (at most the descriptor limit)
#define BUFFERS 4096   // provided receive buffers per thread (a power of two)
#define BUFFER_SIZE 4096
#define GROUP 0

enum { OP_ACCEPT = 1, OP_RECV, OP_SEND, OP_CLOSE };

#define MAX_THREADS 256
static int listeners[MAX_THREADS]; // by thread; -1 until the thread listens
static int thread_total;
static unsigned min_wait_us, batch = 1; // turn batching; 0: a turn returns with its first completion

struct connection {
  int file;          // index in the registered file table
  int matched;       // bytes of "\r\n\r\n" matched at the end of the previous receive
  int sending;       // a send is in flight
  int ended;         // the receive ended (FIN or error): close once no send is in flight
  const struct response *response; // chosen by the first receive
  char *out;         // answers not sent yet; [out_sent, out_length) is in flight or waiting
  size_t out_length, out_sent, out_capacity;
};

struct loop {
  int port;
  int index;
  struct io_uring ring;
  struct io_uring_buf_ring *buffers;
  char *buffer_memory;
  int listener;
  struct connection **connections; // by file index
  struct canned canned;
};

static void die(const char *what, int error) {
  fprintf(stderr, "%s: %s\n", what, strerror(error));
  exit(1);
}

static uint64_t tag(int op, int file) { return ((uint64_t)(uint32_t)file << 8) | (uint64_t)op; }

static struct io_uring_sqe *sqe_of(struct loop *loop) {
  struct io_uring_sqe *sqe = io_uring_get_sqe(&loop->ring);
  if (sqe == NULL) {
    // The submission queue is full: hand what is queued to the kernel and take a fresh entry.
    int submitted = io_uring_submit(&loop->ring);
    if (submitted < 0) die("io_uring_submit", -submitted);
    sqe = io_uring_get_sqe(&loop->ring);
    if (sqe == NULL) die("io_uring_get_sqe", EBUSY);
  }
  return sqe;
}

static void arm_accept(struct loop *loop) {
  struct io_uring_sqe *sqe = sqe_of(loop);
  io_uring_prep_multishot_accept_direct(sqe, loop->listener, NULL, NULL, 0);
  io_uring_sqe_set_data64(sqe, tag(OP_ACCEPT, 0));
}

static void arm_receive(struct loop *loop, struct connection *c) {
  struct io_uring_sqe *sqe = sqe_of(loop);
  io_uring_prep_recv_multishot(sqe, c->file, NULL, 0, 0);
  sqe->flags |= IOSQE_FIXED_FILE | IOSQE_BUFFER_SELECT;
  sqe->buf_group = GROUP;
  io_uring_sqe_set_data64(sqe, tag(OP_RECV, c->file));
}

static void send_pending(struct loop *loop, struct connection *c) {
  struct io_uring_sqe *sqe = sqe_of(loop);
  io_uring_prep_send(sqe, c->file, c->out + c->out_sent, c->out_length - c->out_sent, MSG_NOSIGNAL);
  sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, tag(OP_SEND, c->file));
  c->sending = 1;
}

static void close_connection(struct loop *loop, struct connection *c) {
  struct io_uring_sqe *sqe = sqe_of(loop);
  io_uring_prep_close_direct(sqe, (unsigned)c->file);
  io_uring_sqe_set_data64(sqe, tag(OP_CLOSE, c->file));
  loop->connections[c->file] = NULL;
  free(c->out);
  free(c);
}

static void give_back(struct loop *loop, int buffer) {
  io_uring_buf_ring_add(loop->buffers, loop->buffer_memory + (size_t)buffer * BUFFER_SIZE, BUFFER_SIZE, (unsigned short)buffer,
                        io_uring_buf_ring_mask(BUFFERS), 0);
  io_uring_buf_ring_advance(loop->buffers, 1);
}

static void on_received(struct loop *loop, struct connection *c, const struct io_uring_cqe *cqe) {
  if (cqe->res <= 0) {
    if (cqe->res == -ENOBUFS) { // every provided buffer was taken: receive again once they are back
      arm_receive(loop, c);
      return;
    }
    c->ended = 1;
    if (!c->sending) close_connection(loop, c);
    return;
  }
  int buffer = (int)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
  const char *data = loop->buffer_memory + (size_t)buffer * BUFFER_SIZE;
  size_t length = (size_t)cqe->res;
  if (c->response == NULL) {
    c->response = choose(&loop->canned, data, length);
  }
  size_t answers = count_terminators(data, length, &c->matched);
  give_back(loop, buffer);
  if (!(cqe->flags & IORING_CQE_F_MORE)) arm_receive(loop, c);
  if (answers == 0) return;
  size_t need = c->out_length + answers * c->response->length;
  if (need > c->out_capacity) {
    char *out = realloc(c->out, need);
    if (out == NULL) die("realloc", ENOMEM);
    c->out = out;
    c->out_capacity = need;
  }
  for (size_t i = 0; i < answers; i++) {
    memcpy(c->out + c->out_length, c->response->bytes, c->response->length);
    c->out_length += c->response->length;
  }
  if (!c->sending) send_pending(loop, c);
}

static void on_sent(struct loop *loop, struct connection *c, int result) {
  c->sending = 0;
  if (result < 0) {
    // The peer is gone; the receive ends too, and the connection closes with it (or now, if it already ended).
    c->out_length = c->out_sent = 0;
    if (c->ended) close_connection(loop, c);
    return;
  }
  c->out_sent += (size_t)result;
  if (c->out_sent < c->out_length) {
    send_pending(loop, c);
    return;
  }
  c->out_length = c->out_sent = 0;
  if (c->ended) close_connection(loop, c);
}

static void on_accepted(struct loop *loop, const struct io_uring_cqe *cqe) {
  if (!(cqe->flags & IORING_CQE_F_MORE)) arm_accept(loop);
  if (cqe->res < 0) return; // the table is full or the accept failed: the client sees the refusal
  struct connection *c = calloc(1, sizeof *c);
  if (c == NULL) die("calloc", ENOMEM);
  c->file = cqe->res;
  loop->connections[c->file] = c;
  arm_receive(loop, c);
}

static int listen_on(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) die("socket", errno);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); // inherited by every accepted socket
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) die("bind", errno);
  if (listen(fd, 4096) < 0) die("listen", errno);
  return fd;
}

static void setup(struct loop *loop) {
  struct io_uring_params params = {0};
  params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_CQSIZE;
  params.cq_entries = 16384;
  int result = io_uring_queue_init_params(4096, &loop->ring, &params);
  if (result < 0) die("io_uring_queue_init_params", -result);
  if (min_wait_us != 0 && (params.features & (1U << 15)) == 0) die("MIN_WAIT_US (IORING_FEAT_MIN_TIMEOUT, Linux 6.12)", ENOTSUP);
  // The kernel refuses a table larger than the descriptor limit.
  struct rlimit limit;
  unsigned files = FILES;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < files) files = (unsigned)limit.rlim_cur;
  result = io_uring_register_files_sparse(&loop->ring, files);
  if (result < 0) die("io_uring_register_files_sparse", -result);
  loop->connections = calloc(files, sizeof *loop->connections);
  if (loop->connections == NULL) die("calloc", ENOMEM);

  size_t ring_size = BUFFERS * sizeof(struct io_uring_buf);
  loop->buffers = mmap(NULL, ring_size, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (loop->buffers == MAP_FAILED) die("mmap", errno);
  io_uring_buf_ring_init(loop->buffers);
  struct io_uring_buf_reg registration = {.ring_addr = (uint64_t)(uintptr_t)loop->buffers, .ring_entries = BUFFERS, .bgid = GROUP};
  result = io_uring_register_buf_ring(&loop->ring, &registration, 0);
  if (result < 0) die("io_uring_register_buf_ring", -result);
  loop->buffer_memory = malloc((size_t)BUFFERS * BUFFER_SIZE);
  if (loop->buffer_memory == NULL) die("malloc", ENOMEM);
  for (int i = 0; i < BUFFERS; i++) {
    io_uring_buf_ring_add(loop->buffers, loop->buffer_memory + (size_t)i * BUFFER_SIZE, BUFFER_SIZE, (unsigned short)i,
                          io_uring_buf_ring_mask(BUFFERS), i);
  }
  io_uring_buf_ring_advance(loop->buffers, BUFFERS);
  loop->listener = listen_on(loop->port);
  __atomic_store_n(&listeners[loop->index], loop->listener, __ATOMIC_SEQ_CST);
}

static void on_terminate(int signal_number) {
  (void)signal_number;
  for (int i = 0; i < thread_total; i++) {
    int listener = __atomic_load_n(&listeners[i], __ATOMIC_SEQ_CST);
    if (listener >= 0) shutdown(listener, SHUT_RDWR);
  }
  _exit(0);
}

// Submits the turn's entries, then waits for `batch` completions or `min_wait_us` once one is ready. liburing 2.3 (Debian
// 12) has no call for min_wait_usec, so the enter is made directly; the field is `pad` in its header.
static int submit_and_wait_batch(struct loop *loop) {
  int submitted = io_uring_submit(&loop->ring);
  if (submitted < 0) return submitted;
  struct io_uring_getevents_arg arg = {.sigmask_sz = _NSIG / 8, .pad = min_wait_us};
  long result = syscall(__NR_io_uring_enter, loop->ring.ring_fd, 0, batch, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
                        &arg, sizeof arg);
  return result < 0 ? -errno : (int)result;
}

static void *run(void *argument) {
  struct loop *loop = argument;
  canned_init(&loop->canned);
  setup(loop);
  arm_accept(loop);
  for (;;) {
    int result = min_wait_us == 0 ? io_uring_submit_and_wait(&loop->ring, 1) : submit_and_wait_batch(loop);
    if (result < 0 && result != -EINTR && result != -ETIME) die("io_uring_submit_and_wait", -result);
    refresh_date(&loop->canned);
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&loop->ring, head, cqe) {
      seen++;
      int op = (int)(cqe->user_data & 0xff);
      int file = (int)(cqe->user_data >> 8);
      struct connection *c = op == OP_RECV || op == OP_SEND ? loop->connections[file] : NULL;
      switch (op) {
        case OP_ACCEPT: on_accepted(loop, cqe); break;
        case OP_RECV:
          if (c != NULL) on_received(loop, c, cqe);
          else if (cqe->res > 0) give_back(loop, (int)(cqe->flags >> IORING_CQE_BUFFER_SHIFT));
          break;
        case OP_SEND: if (c != NULL) on_sent(loop, c, cqe->res); break;
        default: break; // OP_CLOSE: nothing to do
      }
    }
    io_uring_cq_advance(&loop->ring, seen);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: c-uring PORT [THREADS [MIN_WAIT_US BATCH]]\n");
    return 2;
  }
  int port = atoi(argv[1]);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGTERM, on_terminate);
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) < 0) die("sched_getaffinity", errno);
  int threads = argc > 2 ? atoi(argv[2]) : CPU_COUNT(&cpus);
  if (argc > 4) {
    min_wait_us = (unsigned)atoi(argv[3]);
    batch = (unsigned)atoi(argv[4]);
  }
  if (port <= 0 || threads <= 0 || threads > MAX_THREADS || argc == 4 || argc > 5 || (argc > 4 && (min_wait_us == 0 || batch == 0))) {
    fprintf(stderr, "usage: c-uring PORT [THREADS [MIN_WAIT_US BATCH]]\n");
    return 2;
  }
  pthread_t ids[threads];
  for (int i = 0; i < threads; i++) listeners[i] = -1;
  thread_total = threads;
  for (int i = 0; i < threads; i++) {
    struct loop *loop = calloc(1, sizeof *loop);
    if (loop == NULL) die("calloc", ENOMEM);
    loop->port = port;
    loop->index = i;
    if (pthread_create(&ids[i], NULL, run, loop) != 0) die("pthread_create", errno);
  }
  printf("c-uring listening on http://127.0.0.1:%d with %d thread(s)\n", port, threads);
  fflush(stdout);
  for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
  return 0;
}
