/* A bot for the Windows checks (scripts/check-windows): it starts a child
 * of its own (this program again, with the argument `child`), which sleeps
 * ten minutes, and exits at once without saying hello. Nothing the bot
 * started may outlive the referee's run: the check looks for the child
 * after the run by the marker in its command line. */
#include <stdio.h>
#include <string.h>
#include <windows.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        Sleep(600000);
        return 0;
    }
    char self[MAX_PATH];
    if (!GetModuleFileNameA(NULL, self, sizeof self)) return 1;
    char cmd[2 * MAX_PATH];
    snprintf(cmd, sizeof cmd, "\"%s\" child schmier-orphan-marker", self);
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    ZeroMemory(&si, sizeof si);
    si.cb = sizeof si;
    if (!CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) return 2;
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    return 0;
}
