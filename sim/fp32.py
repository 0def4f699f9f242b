"""Bit-exact RDNA 4 (gfx1200) FP32 semantics, vectorised over numpy uint32 arrays.

Every function takes raw IEEE-754 binary32 bit patterns (anything ``np.asarray(x, np.uint32)``
accepts: uint32 arrays, numpy scalars, Python ints) and returns a ``np.uint32`` array of raw bits
(``bool`` arrays for compares, ``uint32`` two's-complement bits for the float->int conversions).
Operands broadcast against each other like numpy operands.

Mode: the wave's MODE as sim.fpmode publishes it: by default (clang's kernels) round to
nearest even with denormals kept; FP_DENORM flushing and the directed roundings of add, sub,
mul, fma, ldexp and the integer conversions follow the mode (docs/model.md, "Float mode").
The transcendental unit (rcp, rsq, sqrt, exp, log; sin and cos in sim.fp32ext) reads a
denormal source as a zero of its sign and flushes denormal results in every mode (LLVM
AMDGPU: "v_rcp_f32 and v_rsq_f32 do not support denormals"; v_log_f32 / v_exp_f32 "doesn't
handle denormals").  The exact semantics, the NaN rules and the fixed-point
algorithms of the transcendental unit are specified in docs/fp32.md; the RTL reproduces them
bit for bit.  Summary of the NaN rules:

* an operation with a NaN operand returns the first NaN operand in operand order
  (src0, src1, src2) with its quiet bit (bit 22) set; sign and payload are kept;
* an invalid operation without NaN operands (inf - inf, 0 * inf, sqrt/log/rsq of a number
  below zero, fract(+-inf)) returns the default NaN ``0xFFC00000``;
* v_min_num/v_max_num (IEEE 754-2019 minimumNumber/maximumNumber) return the number when
  exactly one operand is NaN (signalling or quiet) and quiet(src0) when both are NaN;
  v_minimum/v_maximum return quiet(src0) if src0 is sNaN, else quiet(src1) if src1 is sNaN,
  else src0 if it is a qNaN, else src1 if it is a qNaN;
* float -> int conversions map NaN to 0.

The functions are pure: they never touch global numpy state other than through
``np.errstate`` (to silence invalid/overflow warnings of the float helpers).
"""
from __future__ import annotations

import numpy as np

from . import fpmode as FM

__all__ = [
    "DEFAULT_NAN", "CMP_CONDITIONS",
    "add", "sub", "mul", "fma", "min_num", "max_num", "minimum", "maximum", "med3_num",
    "clamp01", "compare", "cmp_class",
    "cmp_f", "cmp_lt", "cmp_eq", "cmp_le", "cmp_gt", "cmp_lg", "cmp_ge", "cmp_o", "cmp_u",
    "cmp_nge", "cmp_nlg", "cmp_ngt", "cmp_nle", "cmp_neq", "cmp_nlt", "cmp_t",
    "cvt_f32_i32", "cvt_f32_u32", "cvt_i32_f32", "cvt_u32_f32",
    "floor", "ceil", "trunc", "rndne", "fract", "ldexp", "frexp_mant", "frexp_exp",
    "rcp", "rsq", "sqrt", "exp", "log",
    "is_nan", "nan_fixup", "unpack", "rcp_core", "rsqrt_core", "exp2_core", "log2_core",
    "RCP_T0", "RSQ_T0", "EXP2_T", "EXP2_C1", "EXP2_C2", "EXP2_C3", "LOG2_C", "LOG2_L",
    "LOG2_P0", "LOG2_P1", "LOG2_P2", "LOG2_P3",
]

U32, U64, I64 = np.uint32, np.uint64, np.int64
F32, F64 = np.float32, np.float64

DEFAULT_NAN = 0xFFC00000          # result of an invalid operation without NaN operands
QUIET_BIT = 0x00400000
_ABS = U32(0x7FFFFFFF)
_INF = U32(0x7F800000)
_SIGN = U32(0x80000000)
_ONE = U32(0x3F800000)

# --------------------------------------------------------------------------------------
# Tables of the transcendental unit (docs/fp32.md, section "Transcendentals").  They are the
# hardware ROM contents; tests/test_fp32.py regenerates every entry from its defining formula
# with exact integer / 80-digit decimal arithmetic and checks it against these literals.
RCP_T0 = (
    0x0ff01, 0x0fd09, 0x0fb19, 0x0f930, 0x0f74e, 0x0f574, 0x0f3a1, 0x0f1d5, 0x0f00f, 0x0ee50,
    0x0ec98, 0x0eae5, 0x0e939, 0x0e793, 0x0e5f3, 0x0e459, 0x0e2c5, 0x0e136, 0x0dfac, 0x0de28,
    0x0dca9, 0x0db2f, 0x0d9ba, 0x0d84a, 0x0d6df, 0x0d579, 0x0d417, 0x0d2ba, 0x0d161, 0x0d00d,
    0x0cebd, 0x0cd71, 0x0cc29, 0x0cae6, 0x0c9a6, 0x0c86a, 0x0c733, 0x0c5fe, 0x0c4ce, 0x0c3a1,
    0x0c278, 0x0c152, 0x0c030, 0x0bf11, 0x0bdf6, 0x0bcdd, 0x0bbc8, 0x0bab6, 0x0b9a8, 0x0b89c,
    0x0b793, 0x0b68d, 0x0b58a, 0x0b48a, 0x0b38d, 0x0b292, 0x0b19b, 0x0b0a6, 0x0afb3, 0x0aec3,
    0x0add6, 0x0aceb, 0x0ac03, 0x0ab1d, 0x0aa39, 0x0a958, 0x0a879, 0x0a79c, 0x0a6c2, 0x0a5ea,
    0x0a514, 0x0a440, 0x0a36e, 0x0a29f, 0x0a1d1, 0x0a106, 0x0a03c, 0x09f74, 0x09eaf, 0x09deb,
    0x09d29, 0x09c69, 0x09bab, 0x09aee, 0x09a34, 0x0997b, 0x098c4, 0x0980e, 0x0975a, 0x096a8,
    0x095f8, 0x09549, 0x0949c, 0x093f0, 0x09346, 0x0929d, 0x091f6, 0x09150, 0x090ac, 0x09009,
    0x08f68, 0x08ec8, 0x08e29, 0x08d8c, 0x08cf0, 0x08c56, 0x08bbc, 0x08b24, 0x08a8e, 0x089f8,
    0x08964, 0x088d2, 0x08840, 0x087af, 0x08720, 0x08692, 0x08605, 0x08579, 0x084ef, 0x08465,
    0x083dd, 0x08356, 0x082cf, 0x0824a, 0x081c6, 0x08143, 0x080c1, 0x08040,
)

RSQ_T0 = (
    0x0ff01, 0x0fd0d, 0x0fb24, 0x0f946, 0x0f773, 0x0f5a9, 0x0f3ea, 0x0f234, 0x0f087, 0x0eee2,
    0x0ed46, 0x0ebb3, 0x0ea27, 0x0e8a3, 0x0e727, 0x0e5b1, 0x0e443, 0x0e2db, 0x0e17a, 0x0e020,
    0x0decb, 0x0dd7c, 0x0dc34, 0x0daf1, 0x0d9b3, 0x0d87b, 0x0d748, 0x0d61a, 0x0d4f1, 0x0d3cd,
    0x0d2ad, 0x0d192, 0x0d07b, 0x0cf69, 0x0ce5a, 0x0cd50, 0x0cc4a, 0x0cb48, 0x0ca49, 0x0c94f,
    0x0c858, 0x0c764, 0x0c674, 0x0c587, 0x0c49d, 0x0c3b7, 0x0c2d4, 0x0c1f4, 0x0c116, 0x0c03c,
    0x0bf65, 0x0be90, 0x0bdbe, 0x0bcef, 0x0bc23, 0x0bb59, 0x0ba91, 0x0b9cc, 0x0b90a, 0x0b84a,
    0x0b78c, 0x0b6d0, 0x0b617, 0x0b560, 0x0b451, 0x0b2ef, 0x0b196, 0x0b044, 0x0aef9, 0x0adb6,
    0x0ac79, 0x0ab43, 0x0aa14, 0x0a8eb, 0x0a7c7, 0x0a6aa, 0x0a592, 0x0a480, 0x0a373, 0x0a26b,
    0x0a168, 0x0a069, 0x09f70, 0x09e7b, 0x09d8a, 0x09c9d, 0x09bb5, 0x09ad0, 0x099f0, 0x09913,
    0x0983a, 0x09764, 0x09692, 0x095c4, 0x094f8, 0x09430, 0x0936b, 0x092a9, 0x091ea, 0x0912e,
    0x09074, 0x08fbe, 0x08f0a, 0x08e59, 0x08daa, 0x08cfd, 0x08c54, 0x08bac, 0x08b07, 0x08a64,
    0x089c3, 0x08925, 0x08889, 0x087ee, 0x08756, 0x086c0, 0x0862b, 0x08599, 0x08508, 0x08479,
    0x083ec, 0x08361, 0x082d8, 0x08250, 0x081c9, 0x08145, 0x080c2, 0x08040,
)

EXP2_T = (
    0x80000000, 0x8164d1f4, 0x82cd8699, 0x843a28c4, 0x85aac368, 0x871f6197, 0x88980e81, 0x8a14d575,
    0x8b95c1e4, 0x8d1adf5b, 0x8ea4398b, 0x9031dc43, 0x91c3d374, 0x935a2b2f, 0x94f4efa9, 0x96942d37,
    0x9837f052, 0x99e04593, 0x9b8d39ba, 0x9d3ed9a7, 0x9ef53261, 0xa0b05110, 0xa2704303, 0xa43515ae,
    0xa5fed6aa, 0xa7cd93b5, 0xa9a15ab5, 0xab7a39b6, 0xad583eea, 0xaf3b78ad, 0xb123f582, 0xb311c413,
    0xb504f334, 0xb6fd91e3, 0xb8fbaf47, 0xbaff5ab2, 0xbd08a39f, 0xbf1799b6, 0xc12c4cca, 0xc346ccda,
    0xc5672a11, 0xc78d74c9, 0xc9b9bd86, 0xcbec14ff, 0xce248c15, 0xd06333db, 0xd2a81d92, 0xd4f35aac,
    0xd744fccb, 0xd99d15c2, 0xdbfbb798, 0xde60f482, 0xe0ccdeec, 0xe33f8973, 0xe5b906e7, 0xe8396a50,
    0xeac0c6e8, 0xed4f301f, 0xefe4b99c, 0xf281773c, 0xf5257d15, 0xf7d0df73, 0xfa83b2db, 0xfd3e0c0d,
)

EXP2_C1, EXP2_C2, EXP2_C3 = 0x2c5c85fe, 0xf5fdf00, 0x38d611b
LOG2_C = (
    0x400, 0x3f4, 0x3ec, 0x3e5, 0x3dd, 0x3d6, 0x3cf, 0x3c7, 0x3c0, 0x3b9, 0x3b2, 0x3ac, 0x3a5,
    0x39e, 0x398, 0x391, 0x38b, 0x385, 0x37f, 0x379, 0x373, 0x36d, 0x367, 0x361, 0x35b, 0x356,
    0x350, 0x34b, 0x346, 0x340, 0x33b, 0x336, 0x331, 0x32c, 0x327, 0x322, 0x31d, 0x318, 0x313,
    0x30f, 0x30a, 0x305, 0x301, 0x2fc, 0x2f8, 0x2f3, 0x2ef, 0x2eb, 0x2e7, 0x2e2, 0x2de, 0x2da,
    0x2d6, 0x2d2, 0x2ce, 0x2ca, 0x2c6, 0x2c3, 0x2bf, 0x2bb, 0x2b7, 0x2b4, 0x2b0, 0x2ac, 0x2a9,
    0x2a5, 0x2a2, 0x29e, 0x29b, 0x298, 0x294, 0x291, 0x28e, 0x28a, 0x287, 0x284, 0x281, 0x27e,
    0x27b, 0x278, 0x275, 0x272, 0x26f, 0x26c, 0x269, 0x266, 0x263, 0x260, 0x25d, 0x25b, 0x258,
    0x255, 0x252, 0x250, 0x24d, 0x24a, 0x248, 0x245, 0x243, 0x240, 0x23e, 0x23b, 0x239, 0x236,
    0x234, 0x231, 0x22f, 0x22d, 0x22a, 0x228, 0x226, 0x223, 0x221, 0x21f, 0x21d, 0x21a, 0x218,
    0x216, 0x214, 0x212, 0x20f, 0x20d, 0x20b, 0x209, 0x207, 0x205, 0x203, 0x200,
)

LOG2_L = (
    0x00000000000000, 0x0045a887882829, 0x00748ebf1244e8, 0x009de6ecdcf808, 0x00cd8281c6c205,
    0x00f77bc92845b5, 0x0121c1ef55f06c, 0x015271a78622a1, 0x017d60496cfbb5, 0x01a89f5a6dc9ad,
    0x01d4300a2524d4, 0x01f9c95dc1d116, 0x0225f4deaa1f13, 0x02527587b834cd, 0x0278df6ca19bca,
    0x02a601af2dbe67, 0x02ccf8104e1721, 0x02f430a52c6b25, 0x031bac50428095, 0x03436bf89c168d,
    0x036b7089f6967e, 0x0393baf4e1da2c, 0x03bc4c2ee211a0, 0x03e5253292d511, 0x040e46ffcb6f3d,
    0x0430c62bb7fcf0, 0x045a7014d8fc56, 0x047d6225cf21d2, 0x04a0896ed79929, 0x04caffb8dc3b9a,
    0x04ee9e58ff07e4, 0x051274457bdf62, 0x0536822b119257, 0x055ac8b9ad5e39, 0x057f48a47f0cf4,
    0x05a402a20db435, 0x05c8f76c4d1ad9, 0x05ee27c0b3caab, 0x0613946051d512, 0x0631b0cd762e59,
    0x06578be6d47c14, 0x067da57beef43c, 0x069c4de1eb65e9, 0x06c2d9fd3d1a04, 0x06e1df15ec6c1c,
    0x0708e07022ebd4, 0x07284472caa971, 0x0747d35ffafe1a, 0x07678dadae096c, 0x078f74455941f7,
    0x07af91e5838f02, 0x07cfdc7306d8a7, 0x07f0546c46cd90, 0x0810fa51bf65fd, 0x0831cea610ceb0,
    0x0852d1ee0ba90c, 0x087404b0bda35a, 0x088d0a3dd3a32a, 0x08ae916329156c, 0x08d04982911de5,
    0x08f2332bf4bec2, 0x090bc345861bf4, 0x092e050231df58, 0x095079e1a0382e, 0x096a737448b234,
    0x098d4343ad9c17, 0x09a781beb62fd9, 0x09caae63128f24, 0x09e53337ea4940, 0x09ffd6a73a78eb,
    0x0a238b51604131, 0x0a3e773ebaa4b9, 0x0a5982b6dccad2, 0x0a7dc392f5add5, 0x0a9919c6c87639,
    0x0ab49080ecda53, 0x0ad0280f245ea2, 0x0aebe0c048ac0f, 0x0b07bae450d804, 0x0b23b6cc56cc85,
    0x0b3fd4ca9cd13c, 0x0b5c153293365f, 0x0b787858de2272, 0x0b94fe935b83e4, 0x0bb1a839292797,
    0x0bce75a2aaf55c, 0x0beb6729915393, 0x0c087d28dfb2ff, 0x0c25b7fcf34416, 0x0c39492ec65b35,
    0x0c56c23679b4d2, 0x0c7461100f3efb, 0x0c92261d140d43, 0x0ca6143a49626e, 0x0cc419cf2e7dc5,
    0x0ce246a2f95a93, 0x0cf67a85fa1f8a, 0x0d14e9a8927091, 0x0d294a216aa304, 0x0d47fcb8c0852f,
    0x0d5c8a8df0b46f, 0x0d7b81c7a7da2c, 0x0d903dc4e9de0f, 0x0daf7ad69f0b38, 0x0dc465cd155a91,
    0x0de3e9f4a6f6e2, 0x0df904bb0e1af2, 0x0e0e32deda81e7, 0x0e2e1cb1ca47d2, 0x0e437bdbf52544,
    0x0e58eee20cb7b7, 0x0e7940f8af85f4, 0x0e8ee647894158, 0x0ea49ff5bf42b1, 0x0eba6e29cef27a,
    0x0edb4a481eca5c, 0x0ef14c7605d606, 0x0f0763b3e66d63, 0x0f1d902a37aaa5, 0x0f33d201e5b573,
    0x0f555d36a23995, 0x0f6bd537d1ac78, 0x0f82632d4c1e5b, 0x0f99074222d94d, 0x0fafc1a1e65e8b,
    0x0fc69278a85d75, 0x0fdd79f2fdb446, 0x10000000000000,
)

LOG2_P0, LOG2_P1, LOG2_P2, LOG2_P3 = 0x171547653, -0xb8aa3b29, 0x7b1c2771, -0x5c551d95

_T_RCP0 = np.array(RCP_T0, dtype=I64)
_T_RSQ0 = np.array(RSQ_T0, dtype=I64)
_T_EXP2 = np.array(EXP2_T, dtype=I64)
_T_LOG2C = np.array(LOG2_C, dtype=I64)
_T_LOG2L = np.array(LOG2_L, dtype=I64)


# --------------------------------------------------------------------------------------
# Small helpers
def _u32(x) -> np.ndarray:
    return np.asarray(x, dtype=U32)


def _args(*xs):
    """uint32 views of the operands, broadcast against each other."""
    arrs = [np.asarray(x, dtype=U32) for x in xs]
    if len(arrs) > 1 and any(a.shape != arrs[0].shape for a in arrs):
        arrs = [np.ascontiguousarray(a) for a in np.broadcast_arrays(*arrs)]
    return arrs


def _f32(x: np.ndarray) -> np.ndarray:
    return x.view(F32)


def _bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=F32).view(U32)


def is_nan(x: np.ndarray) -> np.ndarray:
    return (x & _ABS) > _INF


def _is_snan(x: np.ndarray) -> np.ndarray:
    return is_nan(x) & ((x & U32(QUIET_BIT)) == 0)


def _quiet(x: np.ndarray) -> np.ndarray:
    return x | U32(QUIET_BIT)


def nan_fixup(r: np.ndarray, *srcs: np.ndarray) -> np.ndarray:
    """Apply the NaN rules to a float result ``r`` computed from operands ``srcs``.

    NaN operands win in operand order (quieted); any other NaN result is DEFAULT_NAN.
    """
    rn = is_nan(r)
    if not rn.any():
        return r
    out = np.where(rn, U32(DEFAULT_NAN), r)
    for s in reversed(srcs):            # earliest operand applied last = highest priority
        out = np.where(is_nan(s), _quiet(s), out)
    return out.astype(U32, copy=False)


def _sh(n) -> np.ndarray:
    """Shift amounts for uint64 operands (numpy will not mix uint64 and int64)."""
    return np.asarray(n).astype(U64)


def _bitlen64(x: np.ndarray) -> np.ndarray:
    """Number of significant bits of each uint64 (0 for 0), as int64."""
    _, e = np.frexp(x.astype(F64))
    e = e.astype(I64)
    # float64 conversion may round 2^k - 1 up to 2^k for k > 53: correct by one.
    over = (e > 0) & ((x >> _sh(np.maximum(e - 1, 0))) == 0)
    return e - over


def _round_pack(sign, sig, scale, sticky=None) -> np.ndarray:
    """Round sign * (sig + sticky_epsilon) * 2**scale to float32 bits, ties to even.

    sig: uint64 (< 2**63), scale: int64, sticky: bool (True if the exact value is strictly
    above sig * 2**scale by less than 2**scale; the caller guarantees sig then carries at
    least one bit below the float32 rounding position).  Handles denormal results (rounding at
    2**-149), overflow to infinity and zero.
    """
    sig = np.asarray(sig, dtype=U64)
    scale = np.asarray(scale, dtype=I64)
    bl = _bitlen64(sig)
    e = scale + bl - 1                        # exponent of the leading bit
    lsb = np.maximum(e - 23, -149)            # exponent of the result's last kept bit
    sh = lsb - scale                          # right shift that aligns sig to the result ulp
    left = sh <= 0
    shr = np.clip(sh, 1, 63)
    q = np.where(left, sig << _sh(np.clip(-sh, 0, 63)), sig >> _sh(shr))
    rem = sig & ((U64(1) << _sh(shr)) - U64(1))
    half = U64(1) << _sh(shr - 1)
    odd = (q & U64(1)) == 1
    st = np.zeros(sig.shape, bool) if sticky is None else np.asarray(sticky, bool)
    up = ~left & ((rem > half) | ((rem == half) & (st | odd)))
    q = q + up.astype(U64)
    q = np.where(sh > bl, U64(0), q)          # below half of the smallest denormal
    field = np.where(e >= -126, e + 126, 0).astype(U64)
    bits = (field << U64(23)) + q
    bits = np.where((e > 127) | (bits > U64(0x7F800000)), U64(0x7F800000), bits)
    bits = np.where(sig == 0, U64(0), bits)
    return (bits.astype(U32) | (np.asarray(sign).astype(U32) << U32(31))).astype(U32)


def unpack(x: np.ndarray):
    """Split finite non-zero float32 bits into (sign, M, e): |x| = M * 2**(e-23), M in [2^23, 2^24).

    Denormals are normalised.  Values for zero/inf/NaN lanes are meaningless.
    """
    sign = (x >> U32(31)).astype(I64)
    ef = ((x >> U32(23)) & U32(0xFF)).astype(I64)
    fr = (x & U32(0x7FFFFF)).astype(I64)
    den = ef == 0
    _, bl = np.frexp(fr.astype(F64))          # exact for < 2**53
    bl = bl.astype(I64)
    M = np.where(den, fr << np.clip(24 - bl, 0, 24), fr | 0x800000)
    e = np.where(den, bl - 150, ef - 127)
    z = den & (fr == 0)                       # zero: any in-range stand-in (the callers override)
    M = np.where(z, 0x800000, M)
    e = np.where(z, 0, e)
    return sign, M, e


# --------------------------------------------------------------------------------------
# Add, sub, mul, fma
def _rounded(r, exact=None, addends=()) -> np.ndarray:
    """A RNE result in the mode's f32 rounding and denormal handling (sim.fpmode.finish)."""
    return FM.finish(r, 32, exact, addends)


def _f64(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return _f32(x).astype(F64)


def add(a, b) -> np.ndarray:
    """v_add_f32: a + b, rounded in the mode (RNE by default)."""
    a, b = FM.src(32, *_args(a, b))
    with np.errstate(all="ignore"):
        r = _bits(_f32(a) + _f32(b))
    return _rounded(nan_fixup(r, a, b), lambda: FM.fma_odd64(_f64(a), 1.0, _f64(b)), (a, b))


def sub(a, b) -> np.ndarray:
    """v_sub_f32: a - b, rounded in the mode (a NaN in b is returned quieted with its own sign)."""
    a, b = FM.src(32, *_args(a, b))
    with np.errstate(all="ignore"):
        r = _bits(_f32(a) - _f32(b))
    return _rounded(nan_fixup(r, a, b), lambda: FM.fma_odd64(_f64(a), 1.0, -_f64(b)),
                    (a, b ^ _SIGN))


def mul(a, b) -> np.ndarray:
    """v_mul_f32: a * b, rounded in the mode (RNE by default)."""
    a, b = FM.src(32, *_args(a, b))
    with np.errstate(all="ignore"):
        r = _bits(_f32(a) * _f32(b))
    return _rounded(nan_fixup(r, a, b), lambda: _f64(a) * _f64(b))


def _product_proxy(a, b) -> np.ndarray:
    """Bits standing for a*b in an exact-zero sign rule: a zero of the product's sign, or 1.0."""
    sign = (a ^ b) & _SIGN
    zero = ((a & _ABS) == 0) | ((b & _ABS) == 0)
    return np.where(zero, sign, sign | _ONE).astype(U32)


def fma(a, b, c) -> np.ndarray:
    """v_fma_f32 / v_fmac_f32: a * b + c rounded once (in the mode; RNE by default).

    Method (docs/fp32.md): the float64 product of two float32 is exact; TwoSum gives
    s + err == a*b + c exactly; s is then replaced by its round-to-odd neighbour (if err != 0
    and s is even, step one float64 ulp towards err) and rounded once to float32.  Round-to-odd
    at 53 >= 24 + 2 bits followed by RNE is the correctly rounded RNE result.
    """
    a, b, c = FM.src(32, *_args(a, b, c))
    with np.errstate(all="ignore"):
        odd = FM.fma_odd64(_f64(a), _f64(b), _f64(c))
        r = _bits(odd.astype(F32))
    return _rounded(nan_fixup(r, a, b, c), lambda: odd, (_product_proxy(a, b), c))


# --------------------------------------------------------------------------------------
# Min / max / clamp
def _lt_signed_zero(a, b):
    """a < b as floats, with -0 < +0 (operands not NaN)."""
    fa, fb = _f32(a), _f32(b)
    return (fa < fb) | (((a | b) & _ABS) == 0) & (a > b)   # a = -0 (0x80000000), b = +0


def min_num(a, b) -> np.ndarray:
    """v_min_num_f32: IEEE 754-2019 minimumNumber (-0 < +0; a single NaN operand is ignored)."""
    a, b = FM.src(32, *_args(a, b))
    na, nb = is_nan(a), is_nan(b)
    r = np.where(_lt_signed_zero(a, b), a, b)
    r = np.where(nb, a, r)
    r = np.where(na, np.where(nb, _quiet(a), b), r)
    return FM.result(r.astype(U32, copy=False), 32)


def max_num(a, b) -> np.ndarray:
    """v_max_num_f32: IEEE 754-2019 maximumNumber (+0 > -0; a single NaN operand is ignored)."""
    a, b = FM.src(32, *_args(a, b))
    na, nb = is_nan(a), is_nan(b)
    r = np.where(_lt_signed_zero(b, a), a, b)
    r = np.where(nb, a, r)
    r = np.where(na, np.where(nb, _quiet(a), b), r)
    return FM.result(r.astype(U32, copy=False), 32)


def _nan_select_2019(a, b, r):
    """NaN propagation of v_minimum/v_maximum: sNaN(a), sNaN(b), qNaN(a), qNaN(b)."""
    r = np.where(is_nan(b), b, r)
    r = np.where(is_nan(a), a, r)
    r = np.where(_is_snan(b), _quiet(b), r)
    r = np.where(_is_snan(a), _quiet(a), r)
    return r.astype(U32, copy=False)


def minimum(a, b) -> np.ndarray:
    """v_minimum_f32: IEEE 754-2019 minimum (-0 < +0; NaN operands propagate)."""
    a, b = FM.src(32, *_args(a, b))
    return FM.result(_nan_select_2019(a, b, np.where(_lt_signed_zero(a, b), a, b)), 32)


def maximum(a, b) -> np.ndarray:
    """v_maximum_f32: IEEE 754-2019 maximum (+0 > -0; NaN operands propagate)."""
    a, b = FM.src(32, *_args(a, b))
    return FM.result(_nan_select_2019(a, b, np.where(_lt_signed_zero(b, a), a, b)), 32)


def med3_num(a, b, c) -> np.ndarray:
    """v_med3_num_f32 per the ISA pseudocode: min3_num if any operand is NaN, else the median.

    The pseudocode's ``v_max3_num_f32(S0, S1, S2) == S0.f32`` is a float compare (+0 == -0):
    med3(-0, +0, -1) is max_num(+0, -1) = +0 (LLVM's fmed3 constant folding agrees)."""
    a, b, c = FM.src(32, *_args(a, b, c))
    anynan = is_nan(a) | is_nan(b) | is_nan(c)
    mx = max_num(max_num(a, b), c)
    med = np.where(cmp_eq(mx, a), max_num(b, c),
                   np.where(cmp_eq(mx, b), max_num(a, c), max_num(a, b)))
    return np.where(anynan, min_num(min_num(a, b), c), med).astype(U32, copy=False)


def clamp01(x) -> np.ndarray:
    """The VOP3 clamp bit on an FP32 result: NaN -> +0, x < 0 -> +0, x > 1 -> 1.0, else x:
    -0 stays -0 (LLVM's constant folding of the AMDGPU clamp keeps -0; docs/model.md)."""
    x = _u32(x)
    with np.errstate(invalid="ignore"):
        r = np.where(_f32(x) < 0, U32(0), np.where(_f32(x) > 1, _ONE, x))
    return np.where(is_nan(x), U32(0), r).astype(U32, copy=False)


# --------------------------------------------------------------------------------------
# Compares (VOPC).  CMP_CONDITIONS is in opcode order: v_cmp_<cond>_f32 is VOPC op 16 + index
# (gfx12 no longer encodes 'f' and 't' for f32; they are provided for completeness).
CMP_CONDITIONS = ("f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u",
                  "nge", "nlg", "ngt", "nle", "neq", "nlt", "t")


def _cmp_args(a, b):
    a, b = FM.src(32, *_args(a, b))
    return _f32(a), _f32(b)


def cmp_f(a, b):
    a, b = _args(a, b)
    return np.zeros(a.shape, bool)


def cmp_t(a, b):
    a, b = _args(a, b)
    return np.ones(a.shape, bool)


def cmp_lt(a, b):
    fa, fb = _cmp_args(a, b)
    return fa < fb


def cmp_eq(a, b):
    fa, fb = _cmp_args(a, b)
    return fa == fb


def cmp_le(a, b):
    fa, fb = _cmp_args(a, b)
    return fa <= fb


def cmp_gt(a, b):
    fa, fb = _cmp_args(a, b)
    return fa > fb


def cmp_lg(a, b):
    fa, fb = _cmp_args(a, b)
    return (fa < fb) | (fa > fb)


def cmp_ge(a, b):
    fa, fb = _cmp_args(a, b)
    return fa >= fb


def cmp_o(a, b):
    a, b = _args(a, b)
    return ~is_nan(a) & ~is_nan(b)


def cmp_u(a, b):
    a, b = _args(a, b)
    return is_nan(a) | is_nan(b)


def cmp_nge(a, b):
    return ~cmp_ge(a, b)


def cmp_nlg(a, b):
    return ~cmp_lg(a, b)


def cmp_ngt(a, b):
    return ~cmp_gt(a, b)


def cmp_nle(a, b):
    return ~cmp_le(a, b)


def cmp_neq(a, b):
    return ~cmp_eq(a, b)


def cmp_nlt(a, b):
    return ~cmp_lt(a, b)


_CMP = {name: globals()["cmp_" + name] for name in CMP_CONDITIONS}


def compare(cond, a, b) -> np.ndarray:
    """v_cmp_<cond>_f32: cond is a name from CMP_CONDITIONS or its index (VOPC op - 16)."""
    if not isinstance(cond, str):
        cond = CMP_CONDITIONS[int(cond) & 15]
    return _CMP[cond](a, b)


def cmp_class(a, mask) -> np.ndarray:
    """v_cmp_class_f32: bit k of mask tests class k of a.

    0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf.
    """
    a, mask = _args(a, mask)
    mag = a & _ABS
    neg = (a >> U32(31)) == 1
    cls = np.where(mag == 0, np.where(neg, 5, 6),
          np.where(mag < U32(0x00800000), np.where(neg, 4, 7),
          np.where(mag < _INF, np.where(neg, 3, 8),
          np.where(mag == _INF, np.where(neg, 2, 9),
          np.where((a & U32(QUIET_BIT)) != 0, 1, 0))))).astype(U32)
    return ((mask >> cls) & U32(1)) == 1


# --------------------------------------------------------------------------------------
# Conversions and rounding
def cvt_f32_i32(a) -> np.ndarray:
    """v_cvt_f32_i32: signed 32-bit integer to float, RNE."""
    a = _u32(a)
    x = a.view(np.int32).astype(F64)
    return _rounded(_bits(x.astype(F32)), lambda: x)


def cvt_f32_u32(a) -> np.ndarray:
    """v_cvt_f32_u32: unsigned 32-bit integer to float, RNE."""
    a = _u32(a)
    x = a.astype(F64)
    return _rounded(_bits(x.astype(F32)), lambda: x)


def cvt_i32_f32(a) -> np.ndarray:
    """v_cvt_i32_f32: truncate toward zero, saturate to [-2^31, 2^31-1], NaN -> 0."""
    a = _u32(a)
    with np.errstate(all="ignore"):
        f = np.trunc(_f32(a).astype(F64))
        f = np.where(is_nan(a), 0.0, np.clip(f, -2.0 ** 31, 2.0 ** 31 - 1))
    return f.astype(I64).astype(U32)


def cvt_u32_f32(a) -> np.ndarray:
    """v_cvt_u32_f32: truncate toward zero, saturate to [0, 2^32-1], NaN -> 0."""
    a = _u32(a)
    with np.errstate(all="ignore"):
        f = np.trunc(_f32(a).astype(F64))
        f = np.where(is_nan(a), 0.0, np.clip(f, 0.0, 2.0 ** 32 - 1))
    return f.astype(I64).astype(U32)


def _unary_np(fn, a):
    a = FM.src(32, _u32(a))
    with np.errstate(all="ignore"):
        r = _bits(fn(_f32(a)))
    return nan_fixup(r, a)


def floor(a) -> np.ndarray:
    """v_floor_f32: round toward -inf (floor(-0) = -0, floor(-0.5) = -1)."""
    return _unary_np(np.floor, a)


def ceil(a) -> np.ndarray:
    """v_ceil_f32: round toward +inf (ceil(-0.5) = -0)."""
    return _unary_np(np.ceil, a)


def trunc(a) -> np.ndarray:
    """v_trunc_f32: round toward zero (trunc(-0.5) = -0)."""
    return _unary_np(np.trunc, a)


def rndne(a) -> np.ndarray:
    """v_rndne_f32: IEEE roundToIntegralTiesToEven (rndne(-0.5) = -0, rndne(2.5) = 2)."""
    return _unary_np(np.rint, a)


_ALMOST_ONE = U32(0x3F7FFFFF)


def fract(a) -> np.ndarray:
    """v_fract_f32: minimum(a - floor(a), 0x3F7FFFFF); fract(+-inf) = DEFAULT_NAN, fract(-0) = +0."""
    a = FM.src(32, _u32(a))
    with np.errstate(all="ignore"):
        fa = _f32(a)
        d = _bits(fa - np.floor(fa))
    d = np.where(d > _ALMOST_ONE, _ALMOST_ONE, d)            # d >= +0 here (bit order = value order)
    d = np.where((a & _ABS) == _INF, U32(DEFAULT_NAN), d)
    return FM.result(np.where(is_nan(a), _quiet(a), d).astype(U32, copy=False), 32)


def ldexp(a, n) -> np.ndarray:
    """v_ldexp_f32: a * 2**n (n = int32 bits), rounded once in the mode."""
    a, n = _args(a, n)
    a = FM.src(32, a)
    k = np.clip(n.view(np.int32).astype(I64), -400, 400)
    with np.errstate(all="ignore"):
        x = np.ldexp(_f32(a).astype(F64), k)                 # exact in float64
        r = _bits(x.astype(F32))
    return _rounded(nan_fixup(r, a), lambda: x)


def frexp_mant(a) -> np.ndarray:
    """v_frexp_mant_f32: mantissa in [0.5, 1) with the sign of a (denormals normalised);
    +-0 -> +-0, +-inf -> +-inf, NaN -> quiet NaN."""
    a = FM.src(32, _u32(a))
    sign, M, _ = unpack(a)
    r = (sign.astype(U32) << U32(31)) | U32(126 << 23) | (M.astype(U32) & U32(0x7FFFFF))
    special = ((a & _ABS) == 0) | ((a & _ABS) >= _INF)
    r = np.where(special, a, r)
    return np.where(is_nan(a), _quiet(a), r).astype(U32, copy=False)


def frexp_exp(a) -> np.ndarray:
    """v_frexp_exp_i32_f32: e such that a = mant * 2**e, mant in [0.5, 1) (denormals
    normalised: 2**-149 -> -148); 0 for +-0, +-inf and NaN.  Returns int32 bits."""
    a = FM.src(32, _u32(a))
    _, _, e = unpack(a)
    special = ((a & _ABS) == 0) | ((a & _ABS) >= _INF)
    return np.where(special, 0, e + 1).astype(I64).astype(U32)


# --------------------------------------------------------------------------------------
# Transcendental unit: pure integer (fixed-point) algorithms, docs/fp32.md.
def _trans_src(a) -> np.ndarray:
    """The transcendental unit's reading of a source: denormals are zeros of their sign."""
    return FM.flush(_u32(a), 32)


def _special(a):
    mag = a & _ABS
    return mag == 0, mag == _INF, mag > _INF, (a >> U32(31)) == 1


def rcp_core(M):
    """rcp datapath on the normalised significand M (24 bits, m = M * 2^-23 in [1, 2)).

    Returns the intermediates; 'Q' is the candidate for floor(2^48 / M) (exact within +-1).
    """
    t = {"i": (M >> 16) & 127}
    t["R0"] = _T_RCP0[t["i"]]                               # 1/m, 0.16 fixed
    t["E0"] = (1 << 39) - M * t["R0"]                       # 1 - m r0, 0.39 fixed (signed)
    t["R1"] = (t["R0"] << 16) + ((t["R0"] * t["E0"]) >> 23)  # r0 (1 + e0), 0.32 fixed
    t["E1"] = (1 << 55) - M * t["R1"]                       # 1 - m r1, 0.55 fixed (signed)
    t["E1s"] = t["E1"] >> 23                                # 0.32 fixed
    t["R2"] = t["R1"] + ((t["R1"] * t["E1s"]) >> 32)        # r1 (1 + e1), 0.32 fixed
    t["Q"] = t["R2"] >> 7                                   # 0.25 fixed
    return t


def rcp(a) -> np.ndarray:
    """v_rcp_f32: 1/a, correctly rounded (RNE) for normal inputs and results; a denormal
    source reads as a zero (rcp = +-inf) and a denormal result is flushed (|a| > 2**126).

    ROM of 128 16-bit seeds, two Newton-Raphson steps in fixed point, then an exact
    remainder correction (docs/fp32.md).  rcp(+-0) = +-inf, rcp(+-inf) = +-0.
    """
    a = _trans_src(a)
    zero, inf, nan, neg = _special(a)
    sign, M, e = unpack(a)
    Q = rcp_core(M)["Q"]
    rem = (1 << 48) - M * Q                             # exact remainder of 2^48 / M
    lo = rem < 0
    Q, rem = Q - lo, rem + lo * M
    hi = rem >= M
    Q, rem = Q + hi, rem - hi * M
    r = _round_pack(sign, Q.astype(U64), -25 - e, rem != 0)
    r = np.where(zero, (a & _SIGN) | _INF, r)
    r = np.where(inf, a & _SIGN, r)
    return FM.flush(np.where(nan, _quiet(a), r).astype(U32, copy=False), 32)


def rsqrt_core(M, e):
    """Shared datapath of sqrt and rsq.  m' = N * 2^-23 in [1, 4) with |a| = m' * 2^ep, ep even;
    'Y2' ~ 2^30 / sqrt(m') (0.30 fixed)."""
    par = e & 1
    t = {"N": M << par, "ep": e - par}                      # N: 25 bits
    t["k"] = (par << 6) | ((M >> 17) & 63)
    t["Y0"] = _T_RSQ0[t["k"]]                               # 1/sqrt(m'), 0.16 fixed
    t["Y0sq"] = t["Y0"] * t["Y0"]                           # 0.32 fixed
    t["Ea"] = (1 << 55) - t["N"] * t["Y0sq"]                # 1 - m' y0^2, 0.55 fixed (signed)
    t["Eas"] = t["Ea"] >> 23                                # 0.32 fixed
    t["Y1"] = (t["Y0"] << 14) + ((t["Y0"] * t["Eas"]) >> 19)  # y0 (1 + ea/2), 0.30 fixed
    t["Y1sq"] = (t["Y1"] * t["Y1"]) >> 28                   # 0.32 fixed
    t["Eb"] = (1 << 55) - t["N"] * t["Y1sq"]                # 0.55 fixed (signed)
    t["Ebs"] = t["Eb"] >> 23                                # 0.32 fixed
    t["Y2"] = t["Y1"] + ((t["Y1"] * t["Ebs"]) >> 33)        # y1 (1 + eb/2), 0.30 fixed
    t["S"] = (t["N"] * t["Y2"]) >> 29                       # sqrt candidate, 1.24 fixed
    t["Q"] = t["Y2"] >> 5                                   # rsq candidate, 1.25 fixed
    return t


def sqrt(a) -> np.ndarray:
    """v_sqrt_f32: square root, correctly rounded (RNE) for every input.

    sqrt(-0) = -0, sqrt(+inf) = +inf, sqrt(x < 0) = DEFAULT_NAN.
    """
    a = _trans_src(a)
    zero, inf, nan, neg = _special(a)
    sign, M, e = unpack(a)
    t = rsqrt_core(M, e)
    N, S = t["N"], t["S"]
    rem = (N << 25) - S * S                             # exact remainder of isqrt(N * 2^25)
    lo = rem < 0
    rem = rem + lo * (2 * S - 1)
    S = S - lo
    hi = rem > 2 * S
    rem = rem - hi * (2 * S + 1)
    S = S + hi
    r = _round_pack(0, S.astype(U64), (t["ep"] >> 1) - 24, rem != 0)
    r = np.where(neg, U32(DEFAULT_NAN), r)
    r = np.where(zero, a, r)
    r = np.where(inf & ~neg, _INF, r)
    return np.where(nan, _quiet(a), r).astype(U32, copy=False)


def _cmp_q2n(Q, N):
    """sign(Q^2 * N - 2^73), exactly, for Q <= 2^25 + 2 and N < 2^25 (two limbs: N split 13/12)."""
    P = (Q * Q).astype(U64)
    Nu = N.astype(U64)
    lo = P * (Nu & U64(0xFFF))
    hi = P * (Nu >> U64(12)) + (lo >> U64(12))
    lo = lo & U64(0xFFF)
    top = U64(1) << U64(61)
    return np.where(hi > top, 1, np.where(hi < top, -1, np.where(lo != 0, 1, 0)))


def rsq(a) -> np.ndarray:
    """v_rsq_f32: 1/sqrt(a), correctly rounded (RNE) for every input.

    rsq(+0) = +inf, rsq(-0) = -inf, rsq(+inf) = +0, rsq(x < 0) = DEFAULT_NAN.
    """
    a = _trans_src(a)
    zero, inf, nan, neg = _special(a)
    sign, M, e = unpack(a)
    t = rsqrt_core(M, e)
    N, Q = t["N"], t["Q"]                               # Q: candidate floor(2^25 / sqrt(m'))
    Q = Q - (_cmp_q2n(Q, N) > 0)
    Q = Q + (_cmp_q2n(Q + 1, N) <= 0)
    sticky = _cmp_q2n(Q, N) != 0
    r = _round_pack(0, Q.astype(U64), -25 - (t["ep"] >> 1), sticky)
    r = np.where(neg, U32(DEFAULT_NAN), r)
    r = np.where(zero, (a & _SIGN) | _INF, r)
    r = np.where(inf & ~neg, U32(0), r)
    return np.where(nan, _quiet(a), r).astype(U32, copy=False)


def exp2_core(sign, M, e):
    """exp datapath for |a| < 256: a = (-1)^sign M 2^(e-23).  'sig' * 2^('n' - 61) ~ 2^a."""
    k = e + 9                                               # a * 2^32 = M * 2^(e + 9)
    mag = np.where(k >= 0, M << np.clip(k, 0, 16), M >> np.clip(-k, 0, 63))
    t = {"X": np.where(sign == 1, -mag, mag)}               # a in signed 9.32 fixed (toward 0)
    t["n"] = t["X"] >> 32                                   # floor(a)
    f = t["X"] & 0xFFFFFFFF                                 # a - n, 0.32 fixed
    t["j"] = f >> 26                                        # top 6 bits
    r = t["r"] = f & 0x3FFFFFF                              # rest: r * 2^-32 in [0, 2^-6)
    h = 1 << 31                                             # Horner products round to nearest
    t["A2"] = EXP2_C2 + ((EXP2_C3 * r + h) >> 32)
    t["A1"] = EXP2_C1 + ((t["A2"] * r + h) >> 32)
    t["P"] = (1 << 30) + ((t["A1"] * r + h) >> 32)          # 2^(r 2^-32), 1.30 fixed
    t["T"] = _T_EXP2[t["j"]]                                # 2^(j/64), 1.31 fixed
    t["sig"] = t["T"].astype(U64) * t["P"].astype(U64)      # 2^(a - n), 2.61 fixed
    return t


def exp(a) -> np.ndarray:
    """v_exp_f32: 2**a, faithful (error < 0.52 ulp; exact for integer a); a result below 2**-126
    is flushed to +0 (LLVM scales such inputs by 2**6 and the result by 2**-64 for this).

    exp(-inf) = +0, exp(+inf) = +inf, exp(+-0) = 1.0.
    """
    a = _trans_src(a)
    zero, inf, nan, neg = _special(a)
    sign, M, e = unpack(a)
    big = e >= 8                                        # |a| >= 256 (includes inf): 0 or inf
    t = exp2_core(sign, M, e)
    res = _round_pack(0, t["sig"], t["n"] - 61)
    res = np.where(big, np.where(neg, U32(0), _INF), res)
    res = np.where(zero, _ONE, res)
    return FM.flush(np.where(nan, _quiet(a), res).astype(U32, copy=False), 32)


def log2_core(M, e):
    """log datapath: |a| = M 2^(e-23).  Result = 'V' * 2^-65 on the near-1 path, else 'S' * 2^-52."""
    t = {"i": (M >> 16) & 127}
    t["C"] = _T_LOG2C[t["i"]]                               # ~1/m, 1.10 fixed
    T = t["T"] = M * t["C"] - (1 << 33)                     # t = m c - 1, 0.33 fixed (signed)
    t["A2"] = LOG2_P2 + ((LOG2_P3 * T) >> 33)             # Horner, 1.32 fixed
    t["A1"] = LOG2_P1 + ((t["A2"] * T) >> 33)
    t["P"] = LOG2_P0 + ((t["A1"] * T) >> 33)               # log2(1+t)/t, 1.32 fixed
    t["V"] = T * t["P"]                                     # log2(1+t), 0.65 fixed (signed)
    t["near1"] = ((e == 0) & (t["i"] == 0)) | ((e == -1) & (t["i"] == 127))
    t["S"] = (e << 52) + _T_LOG2L[t["i"]] + (t["V"] >> 13)  # e - log2(c) + log2(1+t), 9.52 fixed
    return t


def log(a) -> np.ndarray:
    """v_log_f32: log2(a), faithful (error < 0.52 ulp; exact for powers of two); a denormal
    source reads as a zero of its sign (log = -inf).  log(+-0) = -inf, log(+inf) = +inf,
    log(x < 0) = DEFAULT_NAN, log(1) = +0.
    """
    a = _trans_src(a)
    zero, inf, nan, neg = _special(a)
    sign, M, e = unpack(a)
    t = log2_core(M, e)
    val = np.where(t["near1"], t["V"], t["S"])
    res = _round_pack(val < 0, np.abs(val).astype(U64), np.where(t["near1"], -65, -52))
    res = np.where(neg, U32(DEFAULT_NAN), res)
    res = np.where(zero, U32(0xFF800000), res)
    res = np.where(inf & ~neg, _INF, res)
    return np.where(nan, _quiet(a), res).astype(U32, copy=False)
