/* A test stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks: the Go runtime (1.22 and
 * newer) loads ProcessPrng from it at start and stops when it is missing. It goes only into the
 * test Wine prefix that scripts/wine.sh makes; trtbuild.exe never ships it. */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T n) {
	while (n > 0) {
		ULONG k = n > 0x10000000 ? 0x10000000 : (ULONG)n;
		if (!RtlGenRandom(data, k))
			return FALSE;
		data += k;
		n -= k;
	}
	return TRUE;
}
