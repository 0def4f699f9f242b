"""The FPGA flow (``dcu fpga``, docs/fpga.md): the ECP5 build, per-block synthesis, placement
and logic depth (:mod:`.flow`), depth from a mapped netlist (:mod:`.depth`), the resource
budget counted in RTLIL (:mod:`.budget`), Yosys over pyosys (:mod:`.yosys_native`,
``dcu-yosys``) and the host side of the board's UART link (:mod:`.uartlink`).
"""
