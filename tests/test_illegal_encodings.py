"""Exhaustive illegal-encoding sweep: every word below reaches a clean illegal-instruction error.

The sweep (built here, no cache outside tmp):

* opcodes: every value of the opcode field of every format the project decodes (SOP1/2/K/C/P,
  SMEM, VOP1/2/C, VOP3, VOP3P, DS, FLAT/GLOBAL/SCRATCH, VOPD), of the formats it does not
  (VBUFFER, VIMAGE, VSAMPLE, VINTERP, VDSDIR, VEXPORT) and every format prefix (dword 0 bits
  [31:23]), the other fields 0;
* fields: every opcode the project implements, in each encoding (native and ``_e64``), from an
  encoding LLVM decodes, with each bit outside the prefix and opcode set alone (reserved bits,
  modifiers, operand fields);
* operand codes: every value of each source and destination field of representative opcodes
  of each format (reserved codes, 64-bit pairs, register classes).

Oracle: ``llvm-mc-19 -mcpu=gfx1200 -disassemble`` over the whole sweep in one call per part.
A word LLVM rejects (or prints with an ``/*Invalid ...*/`` operand) must raise
``isa.DecodeError``, except a 16-bit ``_e32`` operand at v128-v255 (true16's high half, which
the model executes; LLVM 19 reads it only with ``+real-true16``); a word LLVM decodes must
decode to the same mnemonic and size, or raise a ``DecodeError`` naming that mnemonic
(decoded but not implemented).

The SIMD's decode stage (hdl/simd/decode.py) runs the same sweep in one Amaranth simulation: it
flags a word illegal exactly when the model's decoder rejects it, the word is a DPP form, or
the SIMD does not execute the opcode (``hdl.simd.IMPLEMENTED``; of a VOPD word, its first half).

End to end: one-wave kernels whose body is a bad word, per format, on the model
(``dcu.launch(backend="model")``): the fault names wave, PC and the dwords. Under ``-m slow``
(about 2 minutes; ``pytest -m slow tests/test_illegal_encodings.py``), the same words on the
``rtl`` backend, ``tiny`` preset, one reused simulator: the SIMD, wave slot, PC and dwords
equal the model's.
"""
from __future__ import annotations

import functools
import re
import subprocess

import pytest

import isa
from isa import DecodeError, Fmt
from isa.decoder import BASE_WORDS, fmt_of
from tests.asmutil import LLVM_MC, needs_llvm

pytestmark = needs_llvm

# dword-0 prefix (mask, value) and opcode field (lsb, width) per format (ISA guide's microcode formats)
ENC = {
    Fmt.SOP2: (0xC0000000, 0x80000000, 23, 7), Fmt.SOPK: (0xF0000000, 0xB0000000, 23, 5),
    Fmt.SOP1: (0xFF800000, 0xBE800000, 8, 8), Fmt.SOPC: (0xFF800000, 0xBF000000, 16, 7),
    Fmt.SOPP: (0xFF800000, 0xBF800000, 16, 7), Fmt.SMEM: (0xFC000000, 0xF4000000, 13, 6),
    Fmt.VOP1: (0xFE000000, 0x7E000000, 9, 8), Fmt.VOP2: (0x80000000, 0x00000000, 25, 6),
    Fmt.VOPC: (0xFE000000, 0x7C000000, 17, 8), Fmt.VOP3: (0xFC000000, 0xD4000000, 16, 10),
    Fmt.DS: (0xFC000000, 0xD8000000, 18, 8), Fmt.VOP3P: (0xFF000000, 0xCC000000, 16, 7),
    Fmt.VGLOBAL: (0xFF000000, 0xEE000000, 14, 8), Fmt.VSCRATCH: (0xFF000000, 0xED000000, 14, 8),
    Fmt.VFLAT: (0xFF000000, 0xEC000000, 14, 8), Fmt.VOPD: (0xFC000000, 0xC8000000, 17, 9),
}
# formats the project does not decode: (mask, value, opcode lsb, opcode width, dwords)
FOREIGN = {"VBUFFER": (0xFC000000, 0xC4000000, 14, 8, 3), "VIMAGE": (0xFC000000, 0xD0000000, 14, 8, 3),
           "VSAMPLE": (0xFC000000, 0xE4000000, 14, 8, 3), "VINTERP": (0xFF000000, 0xCD000000, 16, 5, 2),
           "VDSDIR": (0xFF000000, 0xCE000000, 20, 2, 1), "VEXPORT": (0xFC000000, 0xF8000000, 0, 0, 2)}
LIT = 0x12345678          # the dword after every candidate: a literal inline in no operand width
_VSRC = {Fmt.VOP1: [(0, 0, 9)], Fmt.VOP2: [(0, 0, 9)], Fmt.VOPC: [(0, 0, 9)],
         Fmt.VOP3: [(1, 0, 9), (1, 9, 9), (1, 18, 9)], Fmt.VOP3P: [(1, 0, 9), (1, 9, 9), (1, 18, 9)]}
_SRC_VARIANTS = ((256, 256, 256), (0, 0, 0), (256, 0, 0), (0, 256, 256))     # VGPR v0 / SGPR s0
# (mnemonic, encoding, fields (dword, lsb, width) swept over every value)
OPERANDS = [
    ("s_mov_b32", Fmt.SOP1, [(0, 0, 8), (0, 16, 7)]), ("s_mov_b64", Fmt.SOP1, [(0, 0, 8), (0, 16, 7)]),
    ("s_add_co_u32", Fmt.SOP2, [(0, 0, 8), (0, 8, 8), (0, 16, 7)]),
    ("s_lshl_b64", Fmt.SOP2, [(0, 0, 8), (0, 8, 8), (0, 16, 7)]),
    ("s_cmp_eq_u32", Fmt.SOPC, [(0, 0, 8), (0, 8, 8)]), ("s_cmp_eq_u64", Fmt.SOPC, [(0, 0, 8), (0, 8, 8)]),
    ("s_movk_i32", Fmt.SOPK, [(0, 16, 7)]),
    ("s_load_b32", Fmt.SMEM, [(0, 0, 6), (0, 6, 7), (1, 25, 7)]),
    ("s_load_b128", Fmt.SMEM, [(0, 0, 6), (0, 6, 7), (1, 25, 7)]),
    ("v_mov_b32", Fmt.VOP1, [(0, 0, 9)]), ("v_cvt_f32_f64", Fmt.VOP1, [(0, 0, 9)]),
    ("v_readfirstlane_b32", Fmt.VOP1, [(0, 0, 9), (0, 17, 8)]),
    ("v_add_f16", Fmt.VOP2, [(0, 0, 9), (0, 9, 8), (0, 17, 8)]), ("v_cvt_f32_f16", Fmt.VOP1, [(0, 0, 9)]),
    ("v_cvt_f16_f32", Fmt.VOP1, [(0, 17, 8)]), ("v_cmp_eq_f16", Fmt.VOPC, [(0, 0, 9), (0, 9, 8)]),
    ("v_add_f32", Fmt.VOP2, [(0, 0, 9)]), ("v_cmp_eq_u32", Fmt.VOPC, [(0, 0, 9)]),
    ("v_fma_f32", Fmt.VOP3, [(1, 0, 9), (1, 9, 9), (1, 18, 9)]),
    ("v_add_co_u32", Fmt.VOP3SD, [(0, 8, 7), (1, 0, 9), (1, 9, 9)]),
    ("v_cmp_eq_u32", Fmt.VOP3, [(0, 0, 8), (1, 0, 9)]),
    ("v_readlane_b32", Fmt.VOP3, [(0, 0, 8), (1, 0, 9), (1, 9, 9)]),
    ("v_pk_add_f16", Fmt.VOP3P, [(1, 0, 9), (1, 9, 9), (1, 18, 9)]),
    ("global_load_b32", Fmt.VGLOBAL, [(0, 0, 7)]), ("scratch_load_b32", Fmt.VSCRATCH, [(0, 0, 7)]),
    ("global_store_b32", Fmt.VGLOBAL, [(0, 0, 7)]),
]


# ----------------------------------------------------------------------------- the oracle

_MARK = 0xB0000000 | 123 << 16 | 0x8000        # s_movk_i32 ttmp15, 0x8000 + index
_WARN = re.compile(r"^<stdin>:(\d+):1: warning: invalid instruction encoding")
_OUT = re.compile(r"^\s*(\S+)(.*?);\s*encoding:\s*\[([^\]]*)\]")


def _hex(words) -> str:
    return " ".join(f"0x{b:02x}" for w in words for b in w.to_bytes(4, "little"))


def llvm_decode(cands: list[list[int]]) -> list[tuple[str, int] | None]:
    """LLVM's reading of each candidate (its first dword at the start of a line): (mnemonic,
    size in dwords), or None when LLVM rejects it. Each candidate's line follows a marker line,
    so that what LLVM prints between two markers is that candidate's (lines disassemble apart)."""
    lines = []
    for k, words in enumerate(cands):
        lines += [_hex([_MARK | k & 0x7FFF]), _hex(words)]
    p = subprocess.run([LLVM_MC, "--triple=amdgcn-amd-amdhsa", "-mcpu=gfx1200", "-disassemble", "-show-encoding"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    rejected = {int(m.group(1)) for m in map(_WARN.match, p.stderr.splitlines()) if m}
    outs = [m for m in map(_OUT.match, p.stdout.splitlines()) if m]
    res, pos = [], 0
    for k in range(len(cands)):
        assert outs[pos].group(1) == "s_movk_i32", (k, outs[pos].group(0))
        pos += 1
        marker = f"s_movk_i32 ttmp15, 0x{0x8000 | (k + 1) & 0x7FFF:x}"
        first = outs[pos] if pos < len(outs) else None
        while pos < len(outs) and (outs[pos].group(1) + outs[pos].group(2)).rstrip() != marker:
            pos += 1
        if 2 * k + 2 in rejected or first is None or "/*Invalid" in first.group(0):
            res.append(None)
        else:
            res.append((first.group(1), len(first.group(3).split(",")) // 4))
    return res


# ----------------------------------------------------------------------------- the sweep


def _word(fmt: Fmt, op: int) -> int:
    mask, value, lsb, width = ENC[fmt]
    return value | op << lsb


def _base(fmt: Fmt, op: int) -> list[int]:
    """The opcode with its fields 0 (``saddr`` off where FLAT and the cache ops need it)."""
    words = [_word(fmt, op)] + [0] * (BASE_WORDS[fmt] - 1)
    info = isa.lookup(fmt, op)
    if fmt == Fmt.VFLAT or (info is not None and info.kind == "cache"):
        words[0] |= 0x7C
    return words


def opcode_sweep() -> list[tuple[str, list[int]]]:
    out = []
    for fmt, (_, _, _, width) in ENC.items():
        for op in range(1 << width):
            words = _base(fmt, op)
            if fmt_of(words[0]) == fmt:              # else another format's prefix
                out.append((f"{fmt.value} op {op}", words + [LIT]))
    for name, (_, value, lsb, width, n) in FOREIGN.items():
        out += [(f"{name} op {op}", [value | op << lsb] + [0] * (n - 1) + [LIT]) for op in range(1 << width)]
    out += [(f"prefix {top:03x}", [top << 23, 0, 0, LIT]) for top in range(512)]
    return out


def _encodings():
    """(info, encoding, opcode) of every implemented opcode in each of its encodings."""
    for info in isa.OPCODES:
        yield info, (Fmt.VOP3 if info.fmt == Fmt.VOP3SD else info.fmt), info.op
        if info.fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC) and info.vop3_op is not None:
            yield info, Fmt.VOP3, info.vop3_op


def legal_bases() -> list[tuple[isa.OpInfo, Fmt, list[int]]]:
    """Each implemented opcode and encoding with the first source choice LLVM decodes."""
    encs, cands = list(_encodings()), []
    for info, fmt, op in encs:
        nsrc = len(info.src_bits) if fmt in _VSRC else 0
        for codes in _SRC_VARIANTS:
            words = _base(fmt, op)
            for (d, lsb, _), code in zip(_VSRC.get(fmt, ())[:nsrc], codes):
                words[d] |= code << lsb
            cands.append(words)
    res, n = llvm_decode([c + [LIT] for c in cands]), len(_SRC_VARIANTS)
    out = []
    for k, (info, fmt, _) in enumerate(encs):
        ok = [c for c, r in zip(cands[k * n:(k + 1) * n], res[k * n:(k + 1) * n]) if r is not None]
        assert ok, f"LLVM decodes no plain encoding of {info.name} ({fmt.value})"
        out.append((info, fmt, ok[0]))
    return out


def bit_sweep() -> list[tuple[str, list[int]]]:
    out = []
    for info, fmt, base in legal_bases():
        mask, _, lsb, width = ENC[fmt]
        fixed = mask | ((1 << width) - 1) << lsb
        for d in range(len(base)):
            for b in range(32):
                if not (d == 0 and fixed >> b & 1):
                    words = list(base)
                    words[d] |= 1 << b
                    out.append((f"{info.name} [{fmt.value}] w{d} bit {b}", words + [LIT, LIT]))
    return out


def operand_sweep() -> list[tuple[str, list[int]]]:
    out = []
    for name, fmt, fields in OPERANDS:
        info = isa.by_name(name)
        op = info.vop3_op if fmt in (Fmt.VOP3, Fmt.VOP3SD) and info.fmt != fmt else info.op
        enc = Fmt.VOP3 if fmt == Fmt.VOP3SD else fmt
        for d, lsb, width in fields:
            for v in range(1 << width):
                words = _base(enc, op)
                words[d] |= v << lsb
                out.append((f"{name} [{fmt.value}] w{d}[{lsb + width - 1}:{lsb}] = {v}", words + [LIT, LIT]))
    return out


@functools.cache
def sweep() -> tuple[list[tuple[str, list[int]]], list]:
    """Every candidate and LLVM's reading of it."""
    cands = opcode_sweep() + operand_sweep() + bit_sweep()
    return cands, llvm_decode([w for _, w in cands])


def _mnemonic(text: str) -> str:
    for suffix in ("_e64_dpp", "_e32", "_e64", "_dpp"):
        if text.endswith(suffix):
            return text[:-len(suffix)]
    return text


# ----------------------------------------------------------------------------- decode level


def _model_verdict(words) -> tuple[str, str | None, int]:
    """("ok", mnemonic, dwords) or ("error", the named mnemonic or None, 0)."""
    try:
        inst = isa.decode(words)
    except DecodeError as e:
        return "error", e.mnemonic, 0
    return "ok", isa.disassemble(inst).split()[0], inst.size // 4


def _true16_high_half(words) -> bool:
    """A 16-bit VOP1/VOP2/VOPC (_e32) operand field at v128-v255: the high half of v(N-128)
    (RDNA 4 ISA guide, true16; the model executes it), which LLVM 19 decodes only with
    ``-mattr=+real-true16``."""
    inst = isa.decode(words)
    if inst.fmt not in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC) or inst.dpp is not None:
        return False
    info, f = inst.info, inst.f
    high = [f["src0"] >= 384 and info.src_bits[:1] == (16,),
            f.get("vsrc1", 0) >= 128 and info.src_bits[1:2] == (16,),
            f.get("vdst", 0) >= 128 and info.dst_bits == 16 and info.fmt != Fmt.VOPC and "sdst" not in info.flags]
    return any(high)


def test_decoder_rejects_what_llvm_rejects_and_names_what_it_decodes():
    cands, llvm = sweep()
    assert len(cands) > 60_000
    bad, true16 = [], 0
    for (label, words), ref in zip(cands, llvm):
        verdict, name, size = _model_verdict(words)
        raw = " ".join(f"{w:08x}" for w in words)
        if ref is None and verdict == "ok" and _true16_high_half(words):
            true16 += 1
        elif ref is None:
            if verdict == "ok":
                bad.append(f"{label} [{raw}]: LLVM rejects it, isa.decode reads {name}")
        elif name is None:
            bad.append(f"{label} [{raw}]: LLVM reads {ref[0]}, isa.decode names nothing")
        elif _mnemonic(name) != _mnemonic(ref[0]):
            bad.append(f"{label} [{raw}]: LLVM reads {ref[0]}, isa.decode {verdict} {name}")
        elif verdict == "ok" and size != ref[1]:
            bad.append(f"{label} [{raw}]: {name} is {size} dwords, LLVM reads {ref[1]}")
    assert not bad, f"{len(bad)} disagreements:\n" + "\n".join(bad[:40])
    assert true16 > 1000          # every 16-bit _e32 opcode, bit 7 of each VGPR field


# ----------------------------------------------------------------------------- the RTL decoder


def test_rtl_decoder_flags_every_word_the_simd_cannot_execute():
    from hdl.simd import IMPLEMENTED
    from hdl.isa_tables import OpId
    from tests.bitpack import pack96
    from tests.decode_vectors import vopd_half
    from tests.test_decode import run_stage
    cands, _ = sweep()
    vecs = [(pack96((words + [0, 0])[:3]), 0x1000) for _, words in cands]
    bad = []
    for (label, words), got in zip(cands, run_stage(vecs, ready_rate=1.0)):
        try:
            inst = isa.decode(words[:3])
            if inst.vopd is not None:           # the decode stage gives its first half
                inst, _ = vopd_half((words + [0, 0])[:3], 0x1000, False)
            executes = inst.dpp is None and inst.name in IMPLEMENTED
        except DecodeError:
            inst, executes = None, False
        ok = got["valid"] and not got["illegal"] and got["op"] == OpId[inst.name.upper()] if executes \
            else got["illegal"] and not got["valid"]
        if not ok:
            bad.append(f"{label} [{' '.join(f'{w:08x}' for w in words)}]: model "
                       f"{inst.name if executes else 'illegal'}, RTL illegal={got['illegal']} op={got['op']}")
    assert not bad, f"{len(bad)} disagreements:\n" + "\n".join(bad[:40])


# ----------------------------------------------------------------------------- end to end

# one bad word per format (LLVM rejects each but image_load; the trailing dwords complete the encoding)
E2E = {
    "SOP1 reserved operand": [0xBE8000D1], "SOP2 unknown opcode": [0xAF000000],
    "SOPK unknown opcode": [0xB1800000],
    "SOPC unknown opcode": [0xBF7F0000], "SOPP operand of s_code_end": [0xBF9F0001],
    "SMEM sdata m0": [0xF4001F40, 0xF8000000], "VOP1 v_nop vdst": [0x7E800000],
    "VOP2 reserved operand": [0x060000D1], "VOPC reserved operand": [0x7C9400D1],
    "VOP3 unused src2": [0xD5030000, 0x04020100], "VOP3P bit 23": [0xCC8F0000, 0x00020100],
    "DS reserved bit 17": [0xD8360000, 0x00000000], "GLOBAL sve": [0xEE05007C, 0x00020000, 0],
    "SCRATCH saddr exec_hi": [0xED05007F, 0, 0], "FLAT saddr": [0xEC050000, 0, 0],
    "VOPD dot2acc": [0xCB000000, 0], "prefix 0xFC": [0xFC000000, 0, 0],
    "VIMAGE image_load (not implemented)": [0xD0000000, 0, 0],
}


def _kernel(tmp_path, words: list[int]):
    from dcu.launch import load_program
    from tests.test_cli_errors import asm_kernel
    body = "\ts_nop 0\n" + "".join(f"\t.long 0x{w:08x}\n" for w in words)
    return load_program(asm_kernel(tmp_path, body)).kernel()


def _fault(kernel, backend: str):
    from dcu.errors import classify
    from dcu.launch import launch
    with pytest.raises(Exception) as e:
        launch(kernel, 1, 32, [], backend=backend, **({"config": "tiny"} if backend == "rtl" else {}))
    err = classify(e.value)
    assert err.fault is not None, str(err)
    return err


def _model_dwords(fault) -> list[int]:
    return [int(w, 16) for w in re.search(r"dwords ((?:[0-9a-f]{8} ?)+)", fault.detail).group(1).split()]


@pytest.mark.parametrize("case", list(E2E))
def test_model_reports_wave_pc_and_dwords(tmp_path, case):
    from dcu.launch import image_base
    words = E2E[case]
    assert (llvm_decode([words + [LIT]]) == [None]) != case.startswith("VIMAGE")
    with pytest.raises(DecodeError):
        isa.decode(words + [0, 0])
    kernel = _kernel(tmp_path, words)
    err = _fault(kernel, "model")
    f = err.fault
    assert err.exit_code == 4 and f.what == "not an instruction the decoder knows"
    pc = image_base() + kernel.entry + 4                  # after the s_nop
    assert (f.wave, f.pc) == (0, pc), err
    assert _model_dwords(f) == words[:len(_model_dwords(f))] and _model_dwords(f)[0] == words[0]
    assert f"wave 0, PC {pc:#x}" in str(err) and f"dwords {words[0]:08x}" in str(err)


@pytest.fixture
def shared_rtl(monkeypatch):
    """One tiny DCU simulator for every dispatch of the test; no refusal before launch (the
    RTL's own illegal-instruction trap is under test)."""
    from dcu.backends import rtl, rtlcheck
    monkeypatch.setattr(rtl, "run_dispatch", functools.partial(rtl.run_dispatch, reuse=True))
    monkeypatch.setattr(rtlcheck, "refuse_unsupported", lambda kernel, backend: None)


@pytest.mark.slow
def test_rtl_reports_what_the_model_reports(tmp_path, shared_rtl):
    bad = []
    for i, (case, words) in enumerate(E2E.items()):
        (tmp_path / str(i)).mkdir()
        kernel = _kernel(tmp_path / str(i), words)
        model, rtl = _fault(kernel, "model").fault, _fault(kernel, "rtl")
        f = rtl.fault
        dwords = [int(w, 16) for w in re.search(r"dwords ([0-9a-f ]+)\)", f.instruction).group(1).split()]
        got = (f.simd, f.slot, f.pc, dwords[:len(_model_dwords(model))])
        want = (0, model.wave, model.pc, _model_dwords(model))
        if rtl.exit_code != 4 or f.what != "not an instruction the RTL executes" or got != want:
            bad.append(f"{case}: model {want}, RTL {got}: {rtl}")
    assert not bad, "\n".join(bad)
