// SHA-256 with the SHA-NI instructions. The message schedule and the compression follow
// FIPS 180-4; the instructions do four schedule steps (sha256msg1/msg2) and two rounds
// (sha256rnds2) each. The state lives in two registers as the instructions expect it:
// ABEF and CDGH.
#include "vt_sha256.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t initial_state[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

int vt_sha256_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    int ssse3 = (ecx >> 9) & 1, sse41 = (ecx >> 19) & 1;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    int sha = (ebx >> 29) & 1;
    return ssse3 && sse41 && sha;
}

__attribute__((target("sha,sse4.1,ssse3")))
static void compress(__m128i *abef, __m128i *cdgh, const uint8_t *blocks, size_t count) {
    // Message words are big-endian: this shuffle swaps each 32-bit lane's bytes.
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i state0 = *abef, state1 = *cdgh;
    for (size_t block = 0; block < count; block++, blocks += 64) {
        const __m128i saved0 = state0, saved1 = state1;
        __m128i w[4];  // the schedule's last 16 words, four to a register
        _Pragma("GCC unroll 16")
        for (int group = 0; group < 16; group++) {
            __m128i *current = &w[group & 3];
            if (group < 4) {
                *current = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks + 16 * group)), byte_swap);
            } else {
                // W[t] = σ1(W[t−2]) + W[t−7] + σ0(W[t−15]) + W[t−16], four t at a time.
                const __m128i older = w[(group + 1) & 3], previous = w[(group + 2) & 3], last = w[(group + 3) & 3];
                __m128i sum = _mm_add_epi32(_mm_sha256msg1_epu32(*current, older), _mm_alignr_epi8(last, previous, 4));
                *current = _mm_sha256msg2_epu32(sum, last);
            }
            __m128i input = _mm_add_epi32(*current, _mm_loadu_si128((const __m128i *)(round_constants + 4 * group)));
            state1 = _mm_sha256rnds2_epu32(state1, state0, input);
            input = _mm_shuffle_epi32(input, 0x0E);
            state0 = _mm_sha256rnds2_epu32(state0, state1, input);
        }
        state0 = _mm_add_epi32(state0, saved0);
        state1 = _mm_add_epi32(state1, saved1);
    }
    *abef = state0;
    *cdgh = state1;
}

__attribute__((target("sha,sse4.1,ssse3")))
void vt_sha256(const void *data, size_t length, uint8_t out[32]) {
    // From A…H in order to the ABEF / CDGH registers.
    __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)initial_state), 0xB1);
    __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(initial_state + 4)), 0x1B);
    __m128i state0 = _mm_alignr_epi8(abcd, efgh, 8);
    __m128i state1 = _mm_blend_epi16(efgh, abcd, 0xF0);

    const uint8_t *bytes = data;
    size_t whole = length / 64;
    compress(&state0, &state1, bytes, whole);

    // The tail, 0x80, zeros, and the length in bits, big-endian: one or two more blocks.
    uint8_t last[128] = {0};
    size_t rest = length - whole * 64;
    memcpy(last, bytes + whole * 64, rest);
    last[rest] = 0x80;
    size_t tail_blocks = rest + 9 <= 64 ? 1 : 2;
    uint64_t bits = (uint64_t)length * 8;
    for (int i = 0; i < 8; i++) last[tail_blocks * 64 - 1 - i] = (uint8_t)(bits >> (8 * i));
    compress(&state0, &state1, last, tail_blocks);

    // Back to A…H, then big-endian bytes.
    __m128i feba = _mm_shuffle_epi32(state0, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(state1, 0xB1);
    __m128i dcba = _mm_blend_epi16(feba, dchg, 0xF0);
    __m128i hgfe = _mm_alignr_epi8(dchg, feba, 8);
    // Lane 0 holds A (then B, C, D): each word's bytes swapped, the lanes left in place.
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    _mm_storeu_si128((__m128i *)out, _mm_shuffle_epi8(dcba, byte_swap));
    _mm_storeu_si128((__m128i *)(out + 16), _mm_shuffle_epi8(hgfe, byte_swap));
}

#else

int vt_sha256_available(void) { return 0; }

void vt_sha256(const void *data, size_t length, uint8_t out[32]) {
    (void)data;
    (void)length;
    memset(out, 0, 32);
}

#endif
