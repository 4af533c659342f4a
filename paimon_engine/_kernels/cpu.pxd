# Whether the processor (and the system, which must save the wider registers) has AVX-512 F, BW and VL, for the
# kernels with a vector path (parquet, deletes). Each such path is a C function compiled for that target
# (``__attribute__((target(...)))``), taken only when this says yes; elsewhere (other processors, other
# compilers) the kernels' portable loops run.

cdef extern from *:
    """
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #include <immintrin.h>
    #define PE_X86_VECTOR 1
    static int pe_avx512_available(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
            && __builtin_cpu_supports("avx512vl");
    }
    #else
    #define PE_X86_VECTOR 0
    static int pe_avx512_available(void) { return 0; }
    #endif
    """
    bint pe_avx512_available() noexcept nogil
