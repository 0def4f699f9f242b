"""The board: the FPGA top, its UART and the host link protocol.
"""
