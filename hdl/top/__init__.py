"""The dual compute unit's top: the dispatcher, the barrier, the DCU and the host-facing top.
"""
