/* Wine 8.0 (Debian's wine64) lacks bcryptprimitives.dll, whose ProcessPrng
 * Rust's standard library calls for random bytes. This stand-in, put beside
 * a Rust .exe, answers from advapi32's RtlGenRandom (SystemFunction036),
 * which wine has. Used by scripts/check-windows only; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
