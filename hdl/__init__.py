"""Amaranth RTL of the dual compute unit.

``hdl.config`` (the :class:`~hdl.config.DCUConfig` presets) is pure Python and
is imported by the model, the launcher and the CLI; importing this package must
therefore stay free of Amaranth so that those users do not pay for it.
"""

from .config import PRESETS, ConfigError, DCUConfig, get_config

__all__ = ["DCUConfig", "PRESETS", "get_config", "ConfigError"]
