/* The least a reader of a hostile bot's stdout can do, for
 * scripts/read_floor.py (BENCHMARKS.md, "the floor"): read(2) into one
 * buffer and memchr(3) each newline, nothing else.
 *
 *     cc -O2 -o /tmp/floor_reader scripts/floor_reader.c
 *     python3 scripts/read_floor.py REFEREE 3 stale-spam PAD=60000 LINES=200 \
 *         -- /tmp/floor_reader [PIPE_BYTES [PAUSE_US]]
 *
 * PIPE_BYTES (default: the pipe as it is, 64 KiB) sets the pipe's size with
 * F_SETPIPE_SZ and the size of each read. PAUSE_US (default 0) sleeps that
 * long after each read that did not fill the buffer, so the writer fills the
 * pipe and each read takes more at once: fewer wake-ups of both sides, the
 * best case for a reader that must still look at every byte. Prints the
 * number of lines. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long pipe_bytes = argc > 1 ? atol(argv[1]) : 0;
    long pause_us = argc > 2 ? atol(argv[2]) : 0;
    if (pipe_bytes > 0 && fcntl(0, F_SETPIPE_SZ, pipe_bytes) < 0) {
        perror("F_SETPIPE_SZ");
        return 1;
    }
    size_t cap = pipe_bytes > 0 ? (size_t)pipe_bytes : 65536;
    char *buf = malloc(cap);
    struct timespec pause = {pause_us / 1000000, (pause_us % 1000000) * 1000};
    long lines = 0;
    for (;;) {
        ssize_t n = read(0, buf, cap);
        if (n <= 0)
            break;
        for (char *p = buf, *end = buf + n; (p = memchr(p, '\n', end - p)); p++)
            lines++;
        if (pause_us > 0 && (size_t)n < cap)
            nanosleep(&pause, NULL);
    }
    printf("%ld\n", lines);
    return 0;
}
