"""Status codes shared by every kernel and its twin.

Kernels return a non-negative result on success and one of these negative
codes on failure; the Python wrapper turns a code into an exception.
"""

OK = 0
TRUNCATED = -1        # input ended inside a value
OVERLONG = -2         # a varint longer than its type allows
OUT_OF_RANGE = -3     # a decoded value is outside its legal range
BAD_LENGTH = -4       # a length or count that the buffer cannot hold
BAD_VALUE = -5        # a value that breaks an invariant of the format
NEED_MORE = -6        # an output buffer is too small for the input (not an error in the input)
INVALID_UTF8 = -7     # a string value that is not valid UTF-8

MESSAGES = {
    TRUNCATED: "truncated input",
    OVERLONG: "overlong varint",
    OUT_OF_RANGE: "value out of range",
    BAD_LENGTH: "length exceeds the available bytes",
    BAD_VALUE: "invalid value",
    NEED_MORE: "output buffer too small",
    INVALID_UTF8: "invalid UTF-8",
}


def describe(code):
    return MESSAGES.get(code, "malformed input (status %d)" % code)
