// SHA-256 (FIPS 180-4) on the x86 SHA extensions, for the event chain's short inputs, where a
// general-purpose hashing API's per-call cost outweighs the hashing itself (docs/BENCHMARKS.md,
// "Where compaction's time goes").
#ifndef VT_SHA256_H
#define VT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this CPU has the SHA extensions (and SSSE3 and SSE4.1) and vt_sha256 may be called;
/// 0 otherwise, when callers use another implementation.
int vt_sha256_available(void);

/// out = SHA-256(data[0..<length]). Only when vt_sha256_available() is 1.
void vt_sha256(const void *data, size_t length, uint8_t out[32]);

#ifdef __cplusplus
}
#endif

#endif
