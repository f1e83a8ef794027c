/* A bot for the Windows checks (scripts/check-windows): it answers the
 * referee's hello, then writes one endless line without reading anything.
 * The referee must cut it at its line limit, kill it and play on. */
#include <stdio.h>
#include <string.h>

int main(void) {
    char line[65536];
    if (!fgets(line, sizeof line, stdin)) return 1;
    fputs("{\"type\":\"hello\",\"name\":\"flood\",\"protocol\":\"schmier/1\"}\n", stdout);
    fflush(stdout);
    memset(line, 'x', sizeof line);
    for (;;) fwrite(line, 1, sizeof line, stdout);
}
