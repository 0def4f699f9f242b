"""The UART host link's protocol constants (docs/fpga.md), shared by the gateware
(:mod:`hdl.fpga.fpgatop`) and the host (:mod:`dcu.fpga.uartlink`). Pure Python, like
:mod:`hdl.config`: the host side does not import Amaranth."""

__all__ = ["MAGIC", "ACK", "BUSY", "NAK", "OPS", "REGS"]

MAGIC = b"DCU1"
ACK, BUSY, NAK = b"K", b"B", b"?"
#: Command bytes and their argument byte counts.
OPS = {"IDENT": (ord("I"), 0), "WRITE": (ord("W"), 6), "READ": (ord("R"), 6),
       "SETREG": (ord("S"), 5), "GETREG": (ord("G"), 1), "START": (ord("D"), 0),
       "PERF": (ord("P"), 2)}
#: Register numbers of SETREG/GETREG (``dispatch`` and ``error`` are the first of a run).
REGS = {"dispatch": 0x00, "aperture_base_lo": 0x20, "aperture_base_hi": 0x21,
        "aperture_size_lo": 0x22, "aperture_size_hi": 0x23, "seed": 0x24,
        "status": 0x40, "cycles": 0x41, "error": 0x48}
