"""The memory system: the L0 vector cache and vector memory unit, the LDS, the instruction
and scalar caches, the memory arbiter and ports, the atomic ALU and the external memory model.
"""
