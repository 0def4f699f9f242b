"""The simulation backends of the RTL: ``rtl`` (:mod:`.rtl`, the DCU in Amaranth's simulator),
``verilator`` (:mod:`.verilator`, HostTop compiled by Verilator, with profile-guided builds in
:mod:`.pgo`), one SIMD in lock step with the model (:mod:`.lockstep`) and the check that refuses
a kernel the RTL does not execute before either backend elaborates it (:mod:`.rtlcheck`).
The launcher (:func:`dcu.launch.launch`) picks one by name.
"""
