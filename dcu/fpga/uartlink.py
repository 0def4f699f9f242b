"""The host side of the FPGA's UART link (``hdl/fpga/fpgatop.py`` ``HostLink``; docs/fpga.md).

:class:`UartLink` speaks the byte protocol over any *transport* with ``write(bytes)`` and
``read(n) -> bytes``: :class:`SerialPort` for a board (a POSIX tty, e.g. the ULX3S's
``/dev/ttyUSB0``), or :class:`QueueTransport` with :func:`sim_bridge` for Amaranth's
simulator, which feeds the same bytes to the design's ``rx`` stream and collects its ``tx``
stream. So the code that runs a kernel on a board is the code the tests run in simulation::

    link = UartLink(SerialPort("/dev/ttyUSB0", 115200))
    result = link.run_dispatch(prep, kernel, "fpga", wgp=False)   # prep: dcu.launch.prepare
"""
from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from hdl.fpga.linkproto import ACK, BUSY, MAGIC, NAK, OPS, REGS  # noqa: F401 (re-exported)

from ..backends.rtl import issued_by_group

__all__ = ["UartLink", "LinkInfo", "LinkResult", "LinkError", "SerialPort", "QueueTransport",
           "sim_bridge"]

CHUNK = 1024            # dwords per WRITE or READ command


class LinkError(RuntimeError):
    """The device did not answer as the protocol says (timeout, wrong byte, wrong magic)."""


@dataclass(frozen=True)
class LinkInfo:
    """What IDENT reports.

    Attributes
    ----------
    mem_base, mem_bytes : int
        The memory behind the link.
    counters : int
        Performance counters readable with PERF.
    dispatch_words, error_words : int
        32-bit registers holding the packed dispatch and error layouts.
    """
    mem_base: int
    mem_bytes: int
    counters: int
    dispatch_words: int
    error_words: int


@dataclass
class LinkResult:
    """One dispatch run through the link.

    Attributes
    ----------
    cycles : int
        HostTop's cycle count of the dispatch.
    error_bits : int
        The packed ``hdl.top.dcu.DcuError`` (0: none).
    counters : dict
        Counter name to value (``hdl.top.hosttop.HostTop.perf_names``).
    issued : dict
        Instructions issued per group, summed over the SIMDs.
    seconds : float
        Wall time from the first command to the last answer.
    bytes_sent, bytes_received : int
        Traffic on the link.
    """
    cycles: int
    error_bits: int
    counters: dict = field(default_factory=dict)
    issued: dict = field(default_factory=dict)
    seconds: float = 0.0
    bytes_sent: int = 0
    bytes_received: int = 0


class UartLink:
    """A client of the FPGA's host link.

    Parameters
    ----------
    transport
        Anything with ``write(data: bytes)`` and ``read(n: int) -> bytes`` (exactly ``n``
        bytes, or raise on timeout).
    """

    def __init__(self, transport):
        self.t = transport
        self.sent = 0
        self.received = 0

    @classmethod
    def open(cls, path: str, baud: int = 115_200, timeout: float = 2.0) -> "UartLink":
        """A link over the serial port ``path``."""
        return cls(SerialPort(path, baud, timeout))

    # ---- raw commands --------------------------------------------------------------
    def _send(self, data: bytes) -> None:
        self.sent += len(data)
        self.t.write(bytes(data))

    def _recv(self, n: int) -> bytes:
        data = bytes(self.t.read(n))
        if len(data) != n:
            raise LinkError(f"expected {n} bytes, got {len(data)}")
        self.received += n
        return data

    def _expect(self, what: str, answer: bytes = ACK) -> None:
        got = self._recv(1)
        if got != answer:
            raise LinkError(f"{what}: expected {answer!r}, got {got!r}")

    def ident(self) -> LinkInfo:
        """IDENT: the device's memory and register sizes (LinkError if the magic is wrong)."""
        self._send(bytes([OPS["IDENT"][0]]))
        r = self._recv(16)
        if r[:4] != MAGIC:
            raise LinkError(f"IDENT: not a DCU host link (magic {r[:4]!r})")
        return LinkInfo(int.from_bytes(r[4:8], "little"), int.from_bytes(r[8:12], "little"),
                        int.from_bytes(r[12:14], "little"), r[14], r[15])

    def write_words(self, index: int, words) -> None:
        """WRITE: dwords from dword ``index`` (counted from the memory's base)."""
        words = np.asarray(words, dtype="<u4").ravel()
        for i in range(0, words.size, CHUNK):
            part = words[i:i + CHUNK]
            self._send(bytes([OPS["WRITE"][0]]) + (index + i).to_bytes(4, "little")
                       + part.size.to_bytes(2, "little") + part.tobytes())
            self._expect("WRITE")

    def read_words(self, index: int, count: int) -> np.ndarray:
        """READ: ``count`` dwords from dword ``index``."""
        out = []
        for i in range(0, count, CHUNK):
            n = min(CHUNK, count - i)
            self._send(bytes([OPS["READ"][0]]) + (index + i).to_bytes(4, "little") + n.to_bytes(2, "little"))
            out.append(np.frombuffer(self._recv(4 * n), dtype="<u4"))
        return np.concatenate(out).astype(np.uint32) if out else np.zeros(0, np.uint32)

    def set_reg(self, reg: int, value: int) -> None:
        """SETREG."""
        self._send(bytes([OPS["SETREG"][0], reg]) + (value & 0xFFFF_FFFF).to_bytes(4, "little"))
        self._expect(f"SETREG {reg:#x}")

    def get_reg(self, reg: int) -> int:
        """GETREG."""
        self._send(bytes([OPS["GETREG"][0], reg]))
        return int.from_bytes(self._recv(4), "little")

    def start(self) -> None:
        """START the dispatch in the registers; LinkError if the DCU is busy."""
        self._send(bytes([OPS["START"][0]]))
        got = self._recv(1)
        if got == BUSY:
            raise LinkError("START: the DCU is busy")
        if got != ACK:
            raise LinkError(f"START: expected {ACK!r}, got {got!r}")

    def status(self) -> dict:
        """``{"busy", "done", "error"}`` as bools."""
        s = self.get_reg(REGS["status"])
        return {"busy": bool(s & 1), "done": bool(s & 2), "error": bool(s & 4)}

    def perf(self, index: int) -> int:
        """PERF: counter ``index``."""
        self._send(bytes([OPS["PERF"][0]]) + index.to_bytes(2, "little"))
        return int.from_bytes(self._recv(4), "little")

    # ---- a whole dispatch ---------------------------------------------------------------
    def set_wide(self, first_reg: int, bits: int, words: int) -> None:
        """Write a packed value into ``words`` consecutive registers from ``first_reg``."""
        for i in range(words):
            self.set_reg(first_reg + i, (bits >> (32 * i)) & 0xFFFF_FFFF)

    def get_wide(self, first_reg: int, words: int) -> int:
        """Read a packed value from ``words`` consecutive registers."""
        return sum(self.get_reg(first_reg + i) << (32 * i) for i in range(words))

    def run_image(self, img, seed: int = 0, timeout: float = 60.0, poll: float = 0.0,
                  perf_names: list[str] | None = None, info: LinkInfo | None = None,
                  load: bool = True, read_back=None) -> tuple[LinkResult, np.ndarray]:
        """Load a :class:`dcu.hostimage.HostImage`, run it, read everything back.

        Parameters
        ----------
        img : HostImage
        seed : int
            The memory model's seed (the FPGA build's memory has a fixed latency: no effect).
        timeout : float
            Seconds to wait for ``done``.
        poll : float
            Seconds between status polls.
        perf_names : list of str, optional
            Counter names (``HostTop.perf_names``); default ``counterN``.
        info : LinkInfo, optional
            IDENT's answer, if already known.
        load : bool
            WRITE the image first (False: the memory already holds it, e.g. a simulation
            that preloaded it).
        read_back : list of (int, int), optional
            Byte ranges ``(start, end)`` from ``img.base`` to READ back (default: the whole
            image); the rest of the returned array is ``img.words``.

        Returns
        -------
        (LinkResult, numpy.ndarray)
            The result and the image's dwords after the run.
        """
        t0 = time.perf_counter()
        sent0, recv0 = self.sent, self.received
        info = info or self.ident()
        if img.base != info.mem_base or img.used_bytes > info.mem_bytes:
            raise LinkError(f"the image ({img.used_bytes} bytes at {img.base:#x}) does not fit the "
                            f"device's memory ({info.mem_bytes} bytes at {info.mem_base:#x})")
        if load:
            self.write_words(0, img.words)
        self.set_wide(REGS["dispatch"], img.dispatch_bits, info.dispatch_words)
        self.set_wide(REGS["aperture_base_lo"], img.aperture_base, 2)
        self.set_wide(REGS["aperture_size_lo"], img.aperture_size, 2)
        self.set_reg(REGS["seed"], seed)
        self.start()
        deadline = time.monotonic() + timeout
        while not self.status()["done"]:
            if time.monotonic() > deadline:
                raise LinkError(f"the dispatch did not finish within {timeout} s")
            if poll:
                time.sleep(poll)
        cycles = self.get_reg(REGS["cycles"])
        error_bits = self.get_wide(REGS["error"], info.error_words)
        names = perf_names or [f"counter{i}" for i in range(info.counters)]
        counters = {name: self.perf(i) for i, name in enumerate(names[:info.counters])}
        if read_back is None:
            words = self.read_words(0, img.words.size)
        else:
            words = np.array(img.words, dtype=np.uint32)
            for start, end in read_back:
                lo, hi = start // 4, -(-end // 4)
                words[lo:hi] = self.read_words(lo, hi - lo)
        res = LinkResult(cycles, error_bits, counters, issued_by_group(counters), time.perf_counter() - t0,
                         self.sent - sent0, self.received - recv0)
        return res, words

    def run_dispatch(self, prep, kernel, config, wgp: bool = False, *, seed: int = 0,
                     timeout: float = 60.0, poll: float = 0.0, load: bool = True,
                     whole_image: bool = False) -> LinkResult:
        """Run a prepared dispatch (``dcu.launch.prepare``) on the device; the buffers in
        ``prep.mem`` are updated in place. An error the DCU latched raises
        ``dcu.backends.rtl.RtlError`` with the same report as the other RTL backends.

        Parameters
        ----------
        prep : dcu.launch.Prepared
        kernel : dcu.codeobj.KernelInfo
        config : str or DCUConfig
            The configuration the device was built with.
        wgp : bool
            WGP mode.
        seed, timeout, poll, load
            As :meth:`run_image`.
        whole_image : bool
            READ the whole image back, not only the buffer arguments (what a kernel may
            write; at 115,200 baud a dword takes 0.35 ms).
        """
        from hdl.config import get_config
        from hdl.top.dcu import DCU, DcuError
        from ..hostimage import host_image
        from ..backends.rtl import RtlError, error_text
        cfg = get_config(config)
        img = host_image(prep, cfg, wgp)
        ranges = None if whole_image else [(alloc.base - img.base, alloc.end - img.base)
                                           for alloc, _ in prep.buffers.values()]
        res, words = self.run_image(img, seed=seed, timeout=timeout, poll=poll,
                                    perf_names=DCU(cfg).perf_names, load=load, read_back=ranges)
        img.store_back(prep, words)
        err = DcuError(cfg).from_bits(res.error_bits)
        if err.valid:
            raise RtlError(f"{kernel.name} on the FPGA link ({cfg.name}): "
                           f"{error_text(err, cfg, prep, 0)}", res)
        return res


# ---- transports ------------------------------------------------------------------------
class SerialPort:
    """A POSIX serial port in raw 8N1 mode (no pyserial needed).

    Parameters
    ----------
    path : str
        The tty, e.g. ``/dev/ttyUSB0``.
    baud : int
        A rate ``termios`` knows (``termios.B<baud>``).
    timeout : float
        Seconds a :meth:`read` waits for its bytes.
    """

    def __init__(self, path: str, baud: int = 115_200, timeout: float = 2.0):
        import termios
        speed = getattr(termios, f"B{baud}", None)
        if speed is None:
            raise ValueError(f"termios has no rate {baud}")
        self.timeout = timeout
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        attrs = termios.tcgetattr(self.fd)
        attrs[0] = 0                                        # iflag: raw
        attrs[1] = 0                                        # oflag
        attrs[2] = termios.CS8 | termios.CREAD | termios.CLOCAL
        attrs[3] = 0                                        # lflag: no echo, no canonical mode
        attrs[4] = attrs[5] = speed
        attrs[6][termios.VMIN] = 0
        attrs[6][termios.VTIME] = 0
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)
        termios.tcflush(self.fd, termios.TCIOFLUSH)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]

    def read(self, n: int) -> bytes:
        import select
        out = bytearray()
        deadline = time.monotonic() + self.timeout
        while len(out) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise LinkError(f"serial read timed out after {self.timeout} s ({len(out)} of {n} bytes)")
            out += os.read(self.fd, n - len(out))
        return bytes(out)

    def close(self) -> None:
        os.close(self.fd)


class QueueTransport:
    """A transport between a host thread and a simulation (:func:`sim_bridge`).

    Parameters
    ----------
    timeout : float
        Seconds a :meth:`read` waits for each byte, counted from the simulation's first
        cycle (elaborating a DCU takes a minute).
    """

    def __init__(self, timeout: float = 600.0):
        self.to_device: queue.Queue = queue.Queue()
        self.to_host: queue.Queue = queue.Queue()
        self.timeout = timeout
        self.closed = threading.Event()
        self.started = threading.Event()      # set by sim_bridge on the first cycle

    def write(self, data: bytes) -> None:
        self.to_device.put(bytes(data))

    def read(self, n: int) -> bytes:
        out = bytearray()
        self.started.wait()
        while len(out) < n:
            try:
                out.append(self.to_host.get(timeout=self.timeout))
            except queue.Empty:
                raise LinkError(f"no answer within {self.timeout} s ({len(out)} of {n} bytes)") from None
        return bytes(out)

    def close(self) -> None:
        self.closed.set()


def sim_bridge(transport: QueueTransport, rx, tx, max_cycles: int | None = None):
    """An Amaranth async testbench that connects ``transport`` to a design's byte streams.

    Parameters
    ----------
    transport : QueueTransport
        The host's bytes go to ``rx`` (one per cycle while ready), ``tx``'s bytes to the host.
    rx : stream interface
        The design's command input (``In(stream.Signature(8))``).
    tx : stream interface
        The design's answer output.
    max_cycles : int, optional
        Stop (and close the transport) after this many cycles.

    Returns
    -------
    async function
        For ``Simulator.add_testbench``; it returns once the transport is closed (the host
        thread is done).
    """
    async def bridge(ctx):
        pending = bytearray()
        ctx.set(tx.ready, 1)
        transport.started.set()
        cycles = 0
        while not transport.closed.is_set():
            while not pending:
                try:
                    pending += transport.to_device.get_nowait()
                except queue.Empty:
                    break
            ctx.set(rx.valid, bool(pending))
            if pending:
                ctx.set(rx.payload, pending[0])
            _, _, rx_ready, tx_valid, tx_byte = await ctx.tick().sample(rx.ready, tx.valid, tx.payload)
            if pending and rx_ready:
                del pending[0]
            if tx_valid:
                transport.to_host.put(tx_byte)
            cycles += 1
            if max_cycles is not None and cycles >= max_cycles:
                transport.close()
        ctx.set(rx.valid, 0)
    return bridge
