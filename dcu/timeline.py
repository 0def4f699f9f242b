"""Per-wave-slot state timelines of a simulated run, drawn as a PNG.

``dcu run --backend rtl --timeline FILE.png`` records, on every cycle, the state of every
wave slot of every SIMD (one *lane* per (SIMD, slot)) and draws one horizontal lane per
slot with time on the x axis::

    tl = Timeline(["SIMD0 w0", "SIMD0 w1"])
    issue, ready = tl.code("issue"), tl.code("ready")
    for cycle in ...:                      # once per simulated cycle
        tl.add_cycle(cycle, (issue, ready))
    tl.to_png("run.png", title="saxpy")
    tl.summary()                           # {"SIMD0 w0": {"issue": n, ...}, ...}

Drawing. Each pixel column of a lane covers one cycle, or, when there are more cycles than
columns, a bucket of consecutive cycles (buckets differ in size by at most one). A column
shows the bucket's most frequent state; ``"issue"`` wins ties, other ties go to the state
listed first. Under each lane a thin strip shows the bucket's issue share, white (none) to
the issue colour (every cycle). Colours: Okabe-Ito plus greys, ``"issue"`` strong blue,
``"ready"`` (could issue, another wave was picked) light blue, ``"empty"`` white. Text uses
a 5x7 bitmap font embedded below; the PNG is written with :mod:`zlib` and :mod:`struct`.
"""
from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["STATES", "PALETTE", "Timeline", "Geometry", "write_png", "draw_text"]

STATES = ("issue", "empty", "held", "fetch", "dependency", "loadcnt", "storecnt", "dscnt",
          "kmcnt", "barrier", "structural", "ready")

PALETTE = {
    "issue": (0, 114, 178),         # Okabe-Ito blue
    "empty": (255, 255, 255),
    "held": (160, 160, 160),        # mid grey
    "fetch": (240, 228, 66),        # yellow
    "dependency": (204, 121, 167),  # reddish purple
    "loadcnt": (213, 94, 0),        # vermillion
    "storecnt": (230, 159, 0),      # orange
    "dscnt": (0, 158, 115),         # bluish green
    "kmcnt": (96, 96, 96),          # dark grey
    "barrier": (0, 0, 0),           # black
    "structural": (210, 210, 210),  # light grey
    "ready": (86, 180, 233),        # sky blue
}

# 5x7 font: 7 rows per glyph, one base-32 digit per row (bit 4 = leftmost pixel).
_FONT_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-.,:_/()%=+?[]<>!'#*"
_FONT_ROWS = (
    "ehhvhhhuhhuhhuehggghesihhhisvgguggvvggugggehgnhhfhhhvhhhe44444e72222ichikokihggggggv"
    "hrllhhhhhpljhhehhhhheuhhugggehhhliduhhukihfgge11uv444444hhhhhhehhhhha4hhhlllahha4ahh"
    "hhha444v1248gv00e1fhfggmphhu00egghe11djhhf00ehvge698s8880fhhf1eggmphhh40c444e20622ic"
    "ggikokic44444e00qllhh00mphhh00ehhhe00uhugg00djf1100mpggg00ege1u88s889600hhhjd00hhha4"
    "00hhlla00ha4ah00hhf1e00v248vehjlphe4c4444eeh1248vv2421he26aiv22vgu11he68guhhev124888"
    "ehhehheehhf12c000v00000000cc0000c480cc0cc0000000v01248g024888428422248op248j300v0v00"
    "044v440eh12404e88888ee22222e248g842842124844444044480000aavavaa04lel40")
_GLYPHS = {c: np.array([[int(d, 32) >> (4 - k) & 1 for k in range(5)]
                        for d in _FONT_ROWS[7 * i:7 * i + 7]], dtype=bool)
           for i, c in enumerate(_FONT_CHARS)}
_GLYPHS[" "] = np.zeros((7, 5), dtype=bool)

# Layout, in pixels. A lane: outline row, band, outline row, issue strip, gap.
_PAD = 8
_BAND = 10
_STRIP = 2
_PITCH = 1 + _BAND + 1 + _STRIP + 2
_ADVANCE = 6                        # glyph width plus one column of spacing
_TEXT = (30, 30, 30)
_OUTLINE = (190, 190, 190)
_DEFAULT_COLUMNS = 1200


@dataclass(frozen=True)
class Geometry:
    """Where :meth:`Timeline.render` puts things.

    Attributes
    ----------
    size : tuple of int
        Image ``(width, height)``.
    x0 : int
        Image column of the first plot column.
    columns : int
        Plot width in pixel columns.
    lane_top : tuple of int
        First image row of each lane's state band (``band`` rows tall).
    strip_top : tuple of int
        First image row of each lane's issue-share strip (``strip`` rows tall); empty
        when the timeline has no ``"issue"`` state.
    bucket : int
        Most cycles summarised by one column (1 when every cycle has a column or more).
    band, strip : int
        Heights of a lane's state band and issue-share strip.
    """

    size: tuple
    x0: int
    columns: int
    lane_top: tuple
    strip_top: tuple
    bucket: int
    band: int = _BAND
    strip: int = _STRIP


class Timeline:
    """The state of each lane (a SIMD's wave slot) on each cycle of a run.

    States are stored as small integer codes (indices into ``states``) in a growable
    ``uint8`` array, one row per cycle. Cycles count from the first one recorded; cycles
    skipped between recorded ones read as ``"empty"``.

    Parameters
    ----------
    lanes : list of str
        Lane labels, drawn left of the lanes and used as :meth:`summary` keys (unique).
    states : list of str, optional
        State names, a subset of :data:`STATES` in any order that includes ``"empty"``;
        a state's code is its index here.

    Raises
    ------
    ValueError
        No lanes, duplicate lanes or states, an unknown state or no ``"empty"``.
    """

    def __init__(self, lanes: Sequence[str], states: Sequence[str] = STATES):
        self.lanes = tuple(str(name) for name in lanes)
        self.states = tuple(states)
        if not self.lanes:
            raise ValueError("a timeline needs at least one lane")
        if len(set(self.lanes)) != len(self.lanes):
            raise ValueError(f"duplicate lane labels in {list(self.lanes)}")
        if len(set(self.states)) != len(self.states):
            raise ValueError(f"duplicate states in {list(self.states)}")
        for s in self.states:
            self._check_state(s)
        if "empty" not in self.states:
            raise ValueError("states must include 'empty' (the state of unrecorded cycles)")
        self._index = {s: i for i, s in enumerate(self.states)}
        self._fill = self._index["empty"]
        self._data = np.full((4096, len(self.lanes)), self._fill, dtype=np.uint8)
        self._n = 0                 # recorded rows
        self.start = None           # cycle of row 0: the first cycle recorded

    @staticmethod
    def _check_state(state) -> None:
        if state not in PALETTE:
            raise ValueError(f"unknown state {state!r}; known states: {', '.join(STATES)}")

    def code(self, state: str) -> int:
        """The integer code of ``state`` for :meth:`add_cycle`.

        Raises
        ------
        ValueError
            ``state`` is not one of this timeline's states.
        """
        try:
            return self._index[state]
        except (KeyError, TypeError):
            raise ValueError(f"unknown state {state!r}; this timeline's states: "
                             f"{', '.join(self.states)}") from None

    @property
    def cycles(self) -> int:
        """Number of cycles covered, from :attr:`start` to the last one recorded."""
        return self._n

    def __len__(self) -> int:
        return self._n

    def _row(self, cycle: int) -> int:
        """Row of ``cycle``, growing the array to hold it."""
        if self.start is None:
            self.start = cycle
        i = cycle - self.start
        if i < 0:
            raise ValueError(f"cycle {cycle} precedes the first recorded cycle {self.start}")
        if i >= len(self._data):
            grown = np.full((max(2 * len(self._data), i + 1), len(self.lanes)), self._fill,
                            dtype=np.uint8)
            grown[:self._n] = self._data[:self._n]
            self._data = grown
        self._n = max(self._n, i + 1)
        return i

    def add_cycle(self, cycle: int, codes: Sequence[int]) -> None:
        """Record every lane's state on ``cycle``.

        Parameters
        ----------
        cycle : int
            Simulation cycle; normally one more than the previous call's.
        codes : sequence of int
            One state code per lane (see :meth:`code`).

        Raises
        ------
        ValueError
            Wrong number of codes, a code out of range or ``cycle`` before the first one.
        """
        arr = np.asarray(codes)
        if arr.shape != (len(self.lanes),):
            raise ValueError(f"{len(codes)} codes for {len(self.lanes)} lanes")
        if arr.min() < 0 or arr.max() >= len(self.states):
            raise ValueError(f"state codes {arr.tolist()} out of range 0..{len(self.states) - 1}")
        i = self._row(cycle)          # may replace self._data
        self._data[i] = arr

    def record(self, cycle: int, lane: int, state: str) -> None:
        """Record one lane's state on ``cycle`` by name.

        Raises
        ------
        ValueError
            Unknown state, lane index out of range or ``cycle`` before the first one.
        """
        code = self.code(state)
        if not 0 <= lane < len(self.lanes):
            raise ValueError(f"lane {lane} out of range 0..{len(self.lanes) - 1}")
        i = self._row(cycle)
        self._data[i, lane] = code

    def summary(self) -> dict:
        """Per-lane cycle counts by state.

        Returns
        -------
        dict
            ``{lane label: {state: cycles}}`` with every state present (zero counts
            included); each lane's counts sum to :attr:`cycles`.
        """
        data = self._data[:self._n]
        n_states = len(self.states)
        return {name: dict(zip(self.states, np.bincount(data[:, k], minlength=n_states).tolist()))
                for k, name in enumerate(self.lanes)}

    def _columns(self, width: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Each plot column's first and one-past-last row: ``width`` columns (default: one
        per cycle, widened to an integer number of pixels per cycle, at most
        ``_DEFAULT_COLUMNS``)."""
        n = self._n
        if width is None:
            width = n * max(1, _DEFAULT_COLUMNS // n) if n <= _DEFAULT_COLUMNS else _DEFAULT_COLUMNS
        if width < 1:
            raise ValueError(f"width must be at least 1, not {width}")
        c = np.arange(width + 1, dtype=np.int64) * n // width
        return c[:-1], np.maximum(c[1:], c[:-1] + 1)

    def _bucket_states(self, starts: np.ndarray, ends: np.ndarray) -> tuple:
        """Majority state per (column, lane) and the issue share (None without "issue")."""
        data = self._data[:self._n]
        present = np.flatnonzero(np.bincount(data.ravel(), minlength=len(self.states)))
        counts = np.zeros((len(self.states), len(starts), len(self.lanes)), dtype=np.int64)
        prefix = np.zeros((self._n + 1, len(self.lanes)), dtype=np.int32)
        for s in present:
            np.cumsum(data == s, axis=0, dtype=np.int32, out=prefix[1:])
            counts[s] = prefix[ends] - prefix[starts]
        mode = counts.argmax(axis=0)
        issue = self._index.get("issue")
        if issue is None:
            return mode, None
        mode[counts[issue] == counts.max(axis=0)] = issue
        return mode, counts[issue] / (ends - starts)[:, None]

    def _ticks(self, columns: int) -> list[tuple[int, str]]:
        """(plot column, label) of round cycle numbers, about six across the plot."""
        n, lo = self._n, self.start
        raw = max(n / 6, 1)
        mag = 10 ** int(np.floor(np.log10(raw)))
        step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
        ticks, last = [], -10**9
        for cyc in range(-(-lo // step) * step, lo + n, step):
            label = f"{cyc // 1000}k" if step % 1000 == 0 and cyc else str(cyc)
            x = min((cyc - lo) * columns // n, columns - 1)
            if x - last > _ADVANCE * (len(label) + 1):
                ticks.append((x, label))
                last = x
        return ticks

    def geometry(self, width: int | None = None, title: str = "") -> Geometry:
        """Layout of :meth:`render` with the same arguments (see :class:`Geometry`)."""
        if self._n == 0:
            raise ValueError("no cycles recorded")
        starts, ends = self._columns(width)
        columns = len(starts)
        x0 = _PAD + _ADVANCE * max(len(s) for s in self.lanes) + _PAD
        top = _PAD + (7 + _PAD if title else 0)
        lane_top = tuple(top + k * _PITCH + 1 for k in range(len(self.lanes)))
        strip_top = tuple(t + _BAND + 1 for t in lane_top) if "issue" in self._index else ()
        caption, legend = self._captions(int((ends - starts).max()))
        text_w = max(_ADVANCE * len(title), x0 - _PAD + _ADVANCE * len(caption))
        img_w = max(x0 + columns + 4 * _ADVANCE, _PAD + text_w + _PAD)
        rows = self._legend_rows(legend, img_w)
        axis = top + len(self.lanes) * _PITCH
        height = axis + 12 + 4 + 7 + _PAD + len(rows) * 12 + _PAD
        return Geometry((img_w, height), x0, columns, lane_top, strip_top,
                        int((ends - starts).max()))

    def _captions(self, bucket: int) -> tuple[str, list[str]]:
        """The line under the cycle axis and the legend entries."""
        end = self.start + self._n - 1
        caption = f"cycles {self.start}-{end}"
        if bucket > 1:
            caption += f", up to {bucket} per column: most frequent state (issue wins ties)"
        legend = list(self.states) + (["issue share"] if "issue" in self._index else [])
        return caption, legend

    @staticmethod
    def _legend_rows(entries: list[str], img_w: int) -> list[list[tuple[int, str]]]:
        """Legend entries as rows of (x, name), wrapped to the image width."""
        rows, x = [[]], _PAD
        for name in entries:
            w = 16 + _ADVANCE * len(name) + 2 * _ADVANCE
            if rows[-1] and x + w - 2 * _ADVANCE > img_w - _PAD:
                rows.append([])
                x = _PAD
            rows[-1].append((x, name))
            x += w
        return rows

    def render(self, width: int | None = None, title: str = "") -> np.ndarray:
        """The timeline as an RGB image.

        Parameters
        ----------
        width : int, optional
            Plot width in pixel columns, excluding labels and margins. Default: one column
            per cycle, widened to a whole number of pixels per cycle up to 1200 columns;
            runs longer than 1200 cycles get 1200 columns.
        title : str, optional
            Text drawn above the lanes.

        Returns
        -------
        numpy.ndarray
            ``uint8`` array of shape ``(height, width, 3)``; :meth:`geometry` gives the
            layout.

        Raises
        ------
        ValueError
            Nothing recorded yet, or ``width`` < 1.
        """
        geo = self.geometry(width, title)
        starts, ends = self._columns(width)
        mode, share = self._bucket_states(starts, ends)
        img_w, img_h = geo.size
        img = np.full((img_h, img_w, 3), 255, dtype=np.uint8)
        x0, x1 = geo.x0, geo.x0 + geo.columns
        if title:
            draw_text(img, _PAD, _PAD, title)

        colours = np.array([PALETTE[s] for s in self.states], dtype=np.uint8)
        lane_rgb = colours[mode]                                    # (columns, lanes, 3)
        if share is not None:
            issue = np.array(PALETTE["issue"], dtype=np.float64)
            strip_rgb = np.rint(255 + share[..., None] * (issue - 255)).astype(np.uint8)
        for k, (name, top) in enumerate(zip(self.lanes, geo.lane_top)):
            img[top - 1:top + _BAND + 1, x0 - 1:x1 + 1] = _OUTLINE
            img[top:top + _BAND, x0:x1] = lane_rgb[:, k]
            if share is not None:
                img[geo.strip_top[k]:geo.strip_top[k] + _STRIP, x0:x1] = strip_rgb[:, k]
            draw_text(img, x0 - _PAD - _ADVANCE * len(name) + 1, top + 1, name)

        axis = geo.lane_top[-1] - 1 + _PITCH
        img[axis, x0 - 1:x1 + 1] = _OUTLINE
        for x, label in self._ticks(geo.columns):
            img[axis:axis + 4, x0 + x] = _TEXT
            lx = x0 + x - (_ADVANCE * len(label) - 1) // 2
            draw_text(img, min(max(lx, x0 - _PAD), img_w - _ADVANCE * len(label)), axis + 5, label)
        caption, legend = self._captions(geo.bucket)
        draw_text(img, x0, axis + 16, caption)

        y = axis + 16 + 7 + _PAD
        for row in self._legend_rows(legend, img_w):
            for x, name in row:
                img[y:y + 9, x:x + 13] = _OUTLINE
                if name == "issue share":
                    ramp = np.linspace(0.0, 1.0, 11)[:, None] * (np.array(PALETTE["issue"]) - 255.0)
                    img[y + 1:y + 8, x + 1:x + 12] = np.rint(255 + ramp).astype(np.uint8)
                else:
                    img[y + 1:y + 8, x + 1:x + 12] = PALETTE[name]
                draw_text(img, x + 16, y + 1, name)
            y += 12
        return img

    def to_png(self, path: str | os.PathLike, width: int | None = None, title: str = "") -> None:
        """Write :meth:`render`'s image to ``path`` as a PNG (arguments as there)."""
        write_png(path, self.render(width, title))


def draw_text(img: np.ndarray, x: int, y: int, text: str, colour=_TEXT) -> None:
    """Draw ``text`` with its top-left corner at (x, y), clipped to the image; characters
    outside the font draw as "?"."""
    h, w = img.shape[:2]
    for ch in text:
        glyph = _GLYPHS.get(ch, _GLYPHS["?"])
        gx0, gy0 = max(0, -x), max(0, -y)
        gx1, gy1 = min(5, w - x), min(7, h - y)
        if gx0 < gx1 and gy0 < gy1:
            region = img[y + gy0:y + gy1, x + gx0:x + gx1]
            region[glyph[gy0:gy1, gx0:gx1]] = colour
        x += _ADVANCE


def write_png(path: str | os.PathLike, rgb: np.ndarray) -> None:
    """Write an RGB ``uint8`` array of shape ``(height, width, 3)`` as an 8-bit RGB PNG
    (no interlace, filter 0 on every row)."""
    h, w, _ = rgb.shape
    raw = np.zeros((h, 1 + 3 * w), dtype=np.uint8)           # column 0: filter type 0
    raw[:, 1:] = rgb.reshape(h, 3 * w)

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    png = (b"\x89PNG\r\n\x1a\n"
           + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
           + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)
