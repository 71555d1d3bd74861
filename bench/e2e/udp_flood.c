// Bounded UDP sender for bench/e2e: COUNT datagrams of SIZE bytes to HOST:PORT over FLOWS
// sockets (distinct source ports), in sendmmsg batches of 64, stopping after LIMIT_S seconds
// at most. Prints "sent N seconds S". No pacing: it measures how much the path takes.
//   udp_flood HOST PORT COUNT FLOWS SIZE LIMIT_S
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s HOST PORT COUNT FLOWS SIZE LIMIT_S\n", argv[0]);
        return 2;
    }
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[2]))};
    if (inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1) return 2;
    long count = atol(argv[3]);
    int flows = atoi(argv[4]), size = atoi(argv[5]);
    double limit = atof(argv[6]);
    if (flows < 1 || flows > 1024 || size < 1 || size > 1400) return 2;
    int fds[1024];
    for (int i = 0; i < flows; i++) {
        fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
        if (fds[i] < 0 || connect(fds[i], (struct sockaddr*)&dst, sizeof dst) < 0) {
            perror("socket/connect");
            return 1;
        }
    }
    enum { kBatch = 64 };
    static char payload[1400];
    memset(payload, 'x', sizeof payload);
    struct iovec iov = {.iov_base = payload, .iov_len = (size_t)size};
    struct mmsghdr msgs[kBatch];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < kBatch; i++) {
        msgs[i].msg_hdr.msg_iov = &iov;
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    long sent = 0;
    double start = now(), end = start + limit;
    for (int f = 0; sent < count; f = (f + 1) % flows) {
        int n = count - sent < kBatch ? (int)(count - sent) : kBatch;
        int r = sendmmsg(fds[f], msgs, n, 0);
        if (r > 0) sent += r;
        if ((sent & 0xfff) < kBatch && now() > end) break;
    }
    printf("sent %ld seconds %.3f\n", sent, now() - start);
    return 0;
}
