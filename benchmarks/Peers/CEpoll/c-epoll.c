// A minimal C server for the load harness ("c-epoll"): about the least an HTTP/1.1 server can do and still answer
// wrk. It parses nothing. Each thread owns an SO_REUSEPORT listener and a level-triggered epoll loop; a connection's
// first bytes choose its canned response once ("/json" in the request line picks the JSON one, anything else the
// plaintext one), then every "\r\n\r\n" read on it is answered with one copy of that response, all the answers to one
// read going out in one write. The responses carry the headers a TechEmpower response must have (Server, Date,
// Content-Type, Content-Length); Date is refreshed once a second. It is a reference for the cost of the system calls
// and the loopback path, not an upper bound: it reads up to 64 KiB per read and scans every byte for the terminator,
// and a server can be as fast or faster where the client or the kernel is the limit (the harness records the
// client's CPU to tell).
//
//   c-epoll PORT [THREADS]     THREADS defaults to the number of CPUs the process may run on
//
// Built by benchmarks/load/run.sh with the machine's gcc; stopped with SIGTERM.
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../Canned/canned.h"

#define READ_SIZE 65536

struct connection {
  int fd;
  int matched; // bytes of "\r\n\r\n" matched at the end of the previous read
  const struct response *response; // chosen by the first read
  char *out; // answers the socket did not take yet; reading waits until they are sent
  size_t out_length, out_sent, out_capacity;
};

struct loop {
  int port;
  struct canned canned;
  char input[READ_SIZE];
};

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void close_connection(struct connection *c) {
  close(c->fd);
  free(c->out);
  free(c);
}

static void watch(int epoll, struct connection *c, uint32_t events) {
  struct epoll_event e = {.events = events, .data.ptr = c};
  if (epoll_ctl(epoll, EPOLL_CTL_MOD, c->fd, &e) < 0) die("epoll_ctl");
}

// Sends what is buffered; returns 0 when all went out, 1 when the socket is full, -1 when the connection failed.
static int flush(struct connection *c) {
  while (c->out_sent < c->out_length) {
    ssize_t n = write(c->fd, c->out + c->out_sent, c->out_length - c->out_sent);
    if (n < 0) return errno == EAGAIN ? 1 : -1;
    c->out_sent += (size_t)n;
  }
  c->out_length = c->out_sent = 0;
  return 0;
}

static void on_readable(struct loop *loop, int epoll, struct connection *c) {
  ssize_t n = read(c->fd, loop->input, READ_SIZE);
  if (n <= 0) {
    if (n < 0 && errno == EAGAIN) return;
    close_connection(c);
    return;
  }
  if (c->response == NULL) {
    c->response = choose(&loop->canned, loop->input, (size_t)n);
  }
  size_t answers = count_terminators(loop->input, (size_t)n, &c->matched);
  if (answers == 0) return;
  size_t need = answers * c->response->length;
  if (need > c->out_capacity) {
    free(c->out);
    c->out = malloc(need);
    if (c->out == NULL) die("malloc");
    c->out_capacity = need;
  }
  for (size_t i = 0; i < answers; i++) memcpy(c->out + i * c->response->length, c->response->bytes, c->response->length);
  c->out_length = need;
  int sent = flush(c);
  if (sent < 0) close_connection(c);
  else if (sent > 0) watch(epoll, c, EPOLLOUT);
}

static void on_writable(int epoll, struct connection *c) {
  int sent = flush(c);
  if (sent < 0) close_connection(c);
  else if (sent == 0) watch(epoll, c, EPOLLIN);
}

static void accept_all(int listener, int epoll) {
  for (;;) {
    int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EAGAIN || errno == ECONNABORTED) return;
      die("accept4");
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct connection *c = calloc(1, sizeof *c);
    if (c == NULL) die("calloc");
    c->fd = fd;
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &e) < 0) die("epoll_ctl");
  }
}

static int listen_on(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) die("socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) die("bind");
  if (listen(fd, 4096) < 0) die("listen");
  return fd;
}

static void *run(void *argument) {
  struct loop *loop = argument;
  canned_init(&loop->canned);
  int listener = listen_on(loop->port);
  int epoll = epoll_create1(0);
  if (epoll < 0) die("epoll_create1");
  struct epoll_event e = {.events = EPOLLIN, .data.ptr = NULL};
  if (epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &e) < 0) die("epoll_ctl");
  struct epoll_event events[256];
  for (;;) {
    int ready = epoll_wait(epoll, events, 256, 1000);
    if (ready < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    refresh_date(&loop->canned);
    for (int i = 0; i < ready; i++) {
      struct connection *c = events[i].data.ptr;
      if (c == NULL) accept_all(listener, epoll);
      else if (events[i].events & EPOLLOUT) on_writable(epoll, c);
      else on_readable(loop, epoll, c);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: c-epoll PORT [THREADS]\n");
    return 2;
  }
  int port = atoi(argv[1]);
  signal(SIGPIPE, SIG_IGN); // a client that leaves mid-write ends its connection, not the server
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) < 0) die("sched_getaffinity");
  int threads = argc > 2 ? atoi(argv[2]) : CPU_COUNT(&cpus);
  if (port <= 0 || threads <= 0) {
    fprintf(stderr, "usage: c-epoll PORT [THREADS]\n");
    return 2;
  }
  pthread_t ids[threads];
  for (int i = 0; i < threads; i++) {
    struct loop *loop = calloc(1, sizeof *loop);
    if (loop == NULL) die("calloc");
    loop->port = port;
    if (pthread_create(&ids[i], NULL, run, loop) != 0) die("pthread_create");
  }
  printf("c-epoll listening on http://127.0.0.1:%d with %d thread(s)\n", port, threads);
  fflush(stdout);
  for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
  return 0;
}
