// The canned answers of the C peers (c-epoll, c-uring): a plaintext and a JSON response with the headers a TechEmpower
// response must have (Server, Date, Content-Type, Content-Length), Date refreshed once a second, and the count of request
// terminators in what a connection received. Header-only: each peer is one translation unit.
#ifndef FALCONET_PEERS_CANNED_H
#define FALCONET_PEERS_CANNED_H

#include <stddef.h>
#include <string.h>
#include <time.h>

#define DATE_LENGTH 29 // "Tue, 24 Nov 2026 15:21:01 GMT"

struct response {
  char bytes[160];
  size_t length;
  size_t date_offset;
};

struct canned {
  struct response plaintext, json;
  time_t date_second;
};

static void compose(struct response *r, const char *head, size_t head_length, const char *body, size_t body_length) {
  memcpy(r->bytes, head, head_length);
  r->date_offset = head_length;
  memset(r->bytes + head_length, ' ', DATE_LENGTH);
  memcpy(r->bytes + head_length + DATE_LENGTH, body, body_length);
  r->length = head_length + DATE_LENGTH + body_length;
}

static void canned_init(struct canned *c) {
  static const char plaintext_head[] = "HTTP/1.1 200 OK\r\nServer: C\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nDate: ";
  static const char plaintext_body[] = "\r\n\r\nHello, World!";
  static const char json_head[] = "HTTP/1.1 200 OK\r\nServer: C\r\nContent-Type: application/json\r\nContent-Length: 27\r\nDate: ";
  static const char json_body[] = "\r\n\r\n{\"message\":\"Hello, World!\"}";
  compose(&c->plaintext, plaintext_head, sizeof plaintext_head - 1, plaintext_body, sizeof plaintext_body - 1);
  compose(&c->json, json_head, sizeof json_head - 1, json_body, sizeof json_body - 1);
  c->date_second = 0;
}

// Writes the current second into both responses when it changed.
static void refresh_date(struct canned *c) {
  time_t now = time(NULL);
  if (now == c->date_second) return;
  c->date_second = now;
  struct tm utc;
  char date[DATE_LENGTH + 1];
  gmtime_r(&now, &utc);
  strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  memcpy(c->plaintext.bytes + c->plaintext.date_offset, date, DATE_LENGTH);
  memcpy(c->json.bytes + c->json.date_offset, date, DATE_LENGTH);
}

// The response a connection's first bytes choose: "/json" in the request line picks the JSON one.
static const struct response *choose(const struct canned *c, const char *first, size_t length) {
  return length >= 9 && memcmp(first + 4, "/json", 5) == 0 ? &c->json : &c->plaintext;
}

// Counts request terminators, carrying a partial match from one read to the next.
static size_t count_terminators(const char *p, size_t n, int *matched) {
  static const char terminator[4] = {'\r', '\n', '\r', '\n'};
  size_t count = 0;
  int m = *matched;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == terminator[m]) {
      if (++m == 4) { count++; m = 0; }
    } else {
      m = p[i] == '\r';
    }
  }
  *matched = m;
  return count;
}

#endif
