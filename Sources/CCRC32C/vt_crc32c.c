// The instruction folds 8 bytes a step into the reflected Castagnoli register, exactly as the
// table-driven update does a byte at a time; unaligned loads go through memcpy.
#include "vt_crc32c.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

int vt_crc32c_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx >> 20) & 1;
}

__attribute__((target("sse4.2")))
uint32_t vt_crc32c_update(uint32_t state, const void *data, size_t length) {
    const unsigned char *bytes = (const unsigned char *)data;
    uint64_t crc = state;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        crc = _mm_crc32_u64(crc, word);
        bytes += 8;
        length -= 8;
    }
    uint32_t crc32 = (uint32_t)crc;
    while (length > 0) {
        crc32 = _mm_crc32_u8(crc32, *bytes);
        bytes += 1;
        length -= 1;
    }
    return crc32;
}

#else

int vt_crc32c_available(void) { return 0; }

uint32_t vt_crc32c_update(uint32_t state, const void *data, size_t length) {
    (void)data;
    (void)length;
    return state;
}

#endif
