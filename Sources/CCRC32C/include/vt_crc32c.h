// CRC32C on the SSE4.2 `crc32` instruction: replay checks every block's and record's CRC, and
// slicing-by-8 in Swift took a third of the read stage (docs/BENCHMARKS-JOURNAL.md, "Replay at memory
// speed").
#ifndef VT_CRC32C_H
#define VT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this CPU has SSE4.2 and vt_crc32c_update may be called; 0 otherwise.
int vt_crc32c_available(void);

/// The CRC register after `length` more bytes, from `state` (no inversions: the caller keeps
/// the register as CRC32C's conventions start and finish it). Only when available.
uint32_t vt_crc32c_update(uint32_t state, const void *data, size_t length);

#ifdef __cplusplus
}
#endif

#endif
