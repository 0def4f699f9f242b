"""Random whole-DCU programs compared between the model and an RTL backend (docs/verify.md).

``gen``: programs from the ISA tables; ``run``: one program on two backends and a campaign;
``shrink``: a failing program reduced to a small reproducer; ``coverage``: what the programs
exercised.
"""
