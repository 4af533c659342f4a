# Whether the processor (and the system, which must save the wider registers) has AVX-512 F, BW and VL, for the
# kernels with a vector path (parquet, deletes, bitmap), and AVX-512 VBMI with them (parquet's bit unpacking: a
# byte permute across the whole register); and whether it has carry-less multiplication
# (PCLMULQDQ, with SSE4.1; its 512-bit form VPCLMULQDQ with AVX-512 too), for hashing's CRC-32. Each such path
# is a C function compiled for that target (``__attribute__((target(...)))``), taken only when this says yes;
# elsewhere (other processors, other compilers) the kernels' portable loops run.

cdef extern from *:
    """
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #include <immintrin.h>
    #define PE_X86_VECTOR 1
    static inline int pe_avx512_available(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
            && __builtin_cpu_supports("avx512vl");
    }
    static inline int pe_vbmi_available(void) {
        return pe_avx512_available() && __builtin_cpu_supports("avx512vbmi");
    }
    static inline int pe_pclmul_available(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
    }
    static inline int pe_vpclmul_available(void) {
        __builtin_cpu_init();
        return pe_pclmul_available() && pe_avx512_available() && __builtin_cpu_supports("vpclmulqdq");
    }
    #else
    #define PE_X86_VECTOR 0
    static inline int pe_avx512_available(void) { return 0; }
    static inline int pe_vbmi_available(void) { return 0; }
    static inline int pe_pclmul_available(void) { return 0; }
    static inline int pe_vpclmul_available(void) { return 0; }
    #endif
    """
    bint pe_avx512_available() noexcept nogil
    bint pe_vbmi_available() noexcept nogil
    bint pe_pclmul_available() noexcept nogil
    bint pe_vpclmul_available() noexcept nogil
