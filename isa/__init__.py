"""gfx1200 (RDNA 4) ISA: opcode table, decoder and LLVM-compatible disassembler.

    from isa import Fmt, OpInfo, Inst, DecodeError, OPCODES, decode, disassemble, decode_program

Raw fields in ``Inst.f`` (names as in the RDNA 4 ISA guide's microcode formats):
  SOP2 sdst,ssrc0,ssrc1 · SOPK sdst,simm16 · SOP1 sdst,ssrc0 · SOPC ssrc0,ssrc1 · SOPP simm16
  SMEM sdata,sbase (pair index: register = 2*sbase),soffset (0x7C = none),ioffset (sign-extended),th,scope
  VOP1 vdst,src0 · VOP2 vdst,src0,vsrc1 · VOPC src0,vsrc1
  VOP3 vdst,src0,src1,src2,abs,neg,opsel,clamp,omod · VOP3SD vdst,sdst,src0,src1,src2,neg,clamp,omod
  DS offset0,offset1,vdst,data0,data1,addr
  VGLOBAL vdst,vsrc,vaddr,saddr (0x7C = off),ioffset (sign-extended),th,scope,sve,nv
Source fields (src0/1/2, ssrc0/1) hold operand codes (isa.operands); vsrc1, vdst (VGPR
destinations), DS and VGLOBAL register fields hold VGPR indices 0..255. VOP3 vdst holds an SGPR
code for ops with an SGPR destination (VOPC _e64, v_readlane_b32, v_readfirstlane_b32).
  VOPD opx,opy,srcx0,vsrcx1,vdstx,srcy0,vsrcy1,vdsty; Inst.vopd holds the X and Y operations
  (isa.vopd). A DPP form keeps its DPP code in src0; Inst.dpp holds the DPP dword (isa.dpp).
"""
from .opcodes import Fmt, OpInfo, OPCODES, KINDS, lookup, by_name
from .decoder import Inst, DecodeError, decode, decode_program
from .disasm import disassemble
from . import operands

__all__ = ["Fmt", "OpInfo", "Inst", "DecodeError", "OPCODES", "KINDS", "lookup", "by_name",
           "decode", "decode_program", "disassemble", "operands"]
