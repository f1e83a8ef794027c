/* A bot for the Windows checks (scripts/check-windows): it answers the
 * referee's hello, then reads nothing and answers nothing, forever. The
 * referee must time it out, kill it and play its seat by the fallback. */
#include <stdio.h>
#include <windows.h>

int main(void) {
    char line[65536];
    if (!fgets(line, sizeof line, stdin)) return 1;
    fputs("{\"type\":\"hello\",\"name\":\"hang\",\"protocol\":\"schmier/1\"}\n", stdout);
    fflush(stdout);
    for (;;) Sleep(1000);
}
