"""dcu.timeline: recording, summary counts, bucketing and the PNG it writes."""
import struct
import zlib

import numpy as np
import pytest

from dcu.timeline import PALETTE, STATES, Timeline, write_png

WHITE = (255, 255, 255)


def read_png(path) -> np.ndarray:
    """Parse an 8-bit RGB, filter-0 PNG as written by ``write_png``; checks every chunk's CRC,
    the IHDR fields and the decompressed size."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body), kind
        chunks.append((kind, body))
        pos += 12 + length
    assert pos == len(data)
    assert chunks[0][0] == b"IHDR" and chunks[-1] == (b"IEND", b"")
    w, h, depth, colour, compression, filt, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, colour, compression, filt, interlace) == (8, 2, 0, 0, 0)
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(raw) == h * (1 + 3 * w)
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(h, 1 + 3 * w)
    assert not rows[:, 0].any()                       # filter type 0 on every row
    return rows[:, 1:].reshape(h, w, 3)


def band(img, geo, lane) -> np.ndarray:
    """A lane's state band, one RGB per plot column; all its rows must agree."""
    top = geo.lane_top[lane]
    rows = img[top:top + geo.band, geo.x0:geo.x0 + geo.columns]
    assert (rows == rows[:1]).all()
    return rows[0]


def strip(img, geo, lane) -> np.ndarray:
    top = geo.strip_top[lane]
    rows = img[top:top + geo.strip, geo.x0:geo.x0 + geo.columns]
    assert (rows == rows[:1]).all()
    return rows[0]


def colours(*names) -> np.ndarray:
    return np.array([PALETTE[n] for n in names], dtype=np.uint8)


def share_colour(fraction) -> tuple:
    return tuple(int(round(255 + fraction * (c - 255))) for c in PALETTE["issue"])


# ---- the PNG file ----------------------------------------------------------------
def test_png_is_valid(tmp_path):
    tl = Timeline(["SIMD0 w0", "SIMD0 w1"])
    for c in range(50):
        tl.add_cycle(c, [tl.code("issue"), tl.code("ready")])
    path = tmp_path / "t.png"
    tl.to_png(path, title="valid")
    img = read_png(path)
    assert img.shape == (tl.geometry(title="valid").size[1], tl.geometry(title="valid").size[0], 3)
    assert np.array_equal(img, tl.render(title="valid"))


def test_write_png_round_trip(tmp_path):
    rgb = np.random.default_rng(0).integers(0, 256, size=(7, 13, 3), dtype=np.uint8)
    write_png(tmp_path / "r.png", rgb)
    assert np.array_equal(read_png(tmp_path / "r.png"), rgb)


# ---- one column per cycle --------------------------------------------------------
def known_pattern() -> Timeline:
    """Lane 0 always issues, lane 1 alternates issue/ready, lane 2 is empty then waits on
    loadcnt from cycle 20; 40 cycles starting at cycle 100."""
    tl = Timeline(["SIMD0 w0", "SIMD0 w1", "SIMD1 w0"])
    for c in range(40):
        tl.add_cycle(100 + c, [tl.code("issue"), tl.code("issue" if c % 2 == 0 else "ready"),
                               tl.code("empty" if c < 20 else "loadcnt")])
    return tl


def test_known_pattern_one_pixel_per_cycle(tmp_path):
    tl = known_pattern()
    tl.to_png(tmp_path / "k.png", width=40)
    img, geo = read_png(tmp_path / "k.png"), tl.geometry(width=40)
    assert geo.columns == 40 and geo.bucket == 1
    alternating = ["issue" if c % 2 == 0 else "ready" for c in range(40)]
    assert np.array_equal(band(img, geo, 0), colours(*["issue"] * 40))
    assert np.array_equal(band(img, geo, 1), colours(*alternating))
    assert np.array_equal(band(img, geo, 2), colours(*["empty"] * 20, *["loadcnt"] * 20))
    # Issue strips: full issue colour where the lane issued, white elsewhere.
    assert (strip(img, geo, 0) == PALETTE["issue"]).all()
    assert (strip(img, geo, 1)[0::2] == PALETTE["issue"]).all()
    assert (strip(img, geo, 1)[1::2] == WHITE).all()
    assert (strip(img, geo, 2) == WHITE).all()
    # Each lane is outlined (so empty lanes show) and labelled in the left margin.
    for k, top in enumerate(geo.lane_top):
        assert (img[top - 1, geo.x0:geo.x0 + geo.columns] != WHITE).any(axis=1).all()
        label = img[top:top + geo.band, :geo.x0 - 1]
        assert (label.max(axis=2) < 100).any(), f"no label text for lane {k}"


def test_default_width_widens_short_runs():
    tl = known_pattern()
    img, geo = tl.render(), tl.geometry()
    assert geo.columns == 1200                      # 30 pixels per cycle
    alternating = ["issue" if c % 2 == 0 else "ready" for c in range(40)]
    expect = np.repeat(colours(*alternating), 30, axis=0)
    assert np.array_equal(band(img, geo, 1), expect)


def test_title_is_drawn_above_the_lanes():
    tl = known_pattern()
    plain, titled = tl.geometry(), tl.geometry(title="Hello, saxpy!")
    assert titled.lane_top[0] > plain.lane_top[0]
    img = tl.render(title="Hello, saxpy!")
    assert (img[:titled.lane_top[0] - 1].max(axis=2) < 100).any()
    assert (tl.render()[:plain.lane_top[0] - 1] == 255).all()


# ---- bucketing -------------------------------------------------------------------
def test_bucket_majority_ties_and_issue_share():
    tl = Timeline([f"SIMD0 w{k}" for k in range(4)])
    issue, ready, loadcnt, barrier, fetch, dscnt = map(
        tl.code, ("issue", "ready", "loadcnt", "barrier", "fetch", "dscnt"))
    for c in range(1000):
        p = c % 10
        tl.add_cycle(c, [issue if p < 4 else loadcnt,               # loadcnt 6 : issue 4
                         issue if p < 5 else ready,                 # tie: issue wins
                         barrier if p < 5 else ready,               # tie: first listed state
                         fetch if p < 2 else dscnt if p < 4 else issue if p < 6 else ready])
    img, geo = tl.render(width=100), tl.geometry(width=100)
    assert geo.columns == 100 and geo.bucket == 10
    for lane, state, share in [(0, "loadcnt", 0.4), (1, "issue", 0.5), (2, "barrier", 0.0),
                               (3, "ready", 0.2)]:
        assert (band(img, geo, lane) == PALETTE[state]).all(), lane
        assert (strip(img, geo, lane) == share_colour(share)).all(), lane


def test_uneven_buckets_keep_exact_boundaries():
    tl = Timeline(["w"])
    for c in range(150):                            # 1.5 cycles per column
        tl.add_cycle(c, [tl.code("empty" if c < 75 else "issue")])
    img, geo = tl.render(width=100), tl.geometry(width=100)
    assert geo.bucket == 2
    assert np.array_equal(band(img, geo, 0), colours(*["empty"] * 50, *["issue"] * 50))


def test_custom_states_order_and_no_issue_strip():
    tl = Timeline(["a", "b"], states=["dscnt", "empty", "kmcnt"])
    assert [tl.code(s) for s in ("dscnt", "empty", "kmcnt")] == [0, 1, 2]
    for c in range(20):
        tl.add_cycle(c, [c % 2 * 2, 1])             # dscnt/kmcnt tie: dscnt listed first
    img, geo = tl.render(width=10), tl.geometry(width=10)
    assert geo.strip_top == ()
    assert (band(img, geo, 0) == PALETTE["dscnt"]).all()
    assert (band(img, geo, 1) == WHITE).all()


def test_issue_wins_ties_wherever_listed():
    tl = Timeline(["a"], states=["empty", "ready", "issue"])
    for c in range(20):
        tl.add_cycle(c, [1 + c % 2])                # ready/issue tie in every bucket of 2
    img, geo = tl.render(width=10), tl.geometry(width=10)
    assert (band(img, geo, 0) == PALETTE["issue"]).all()
    assert (strip(img, geo, 0) == share_colour(0.5)).all()


def test_hundred_thousand_cycles_sixteen_lanes(tmp_path):
    lanes = [f"SIMD{s} w{w}" for s in range(2) for w in range(8)]
    tl = Timeline(lanes)
    codes = np.random.default_rng(1).integers(0, len(STATES), size=(100_000, 16), dtype=np.uint8)
    codes[:, 0] = tl.code("issue")
    for c in range(len(codes)):
        tl.add_cycle(c, codes[c])
    tl.to_png(tmp_path / "big.png", title="100k")
    img, geo = read_png(tmp_path / "big.png"), tl.geometry(title="100k")
    assert geo.columns == 1200 and geo.bucket == 84
    assert (band(img, geo, 0) == PALETTE["issue"]).all()
    expect = np.bincount(codes[:, 5], minlength=len(STATES)).tolist()
    assert tl.summary()[lanes[5]] == dict(zip(STATES, expect))


# ---- summary ---------------------------------------------------------------------
def test_summary_counts_exact():
    tl = known_pattern()
    s = tl.summary()
    assert list(s) == ["SIMD0 w0", "SIMD0 w1", "SIMD1 w0"]
    assert s["SIMD0 w0"] == {**dict.fromkeys(STATES, 0), "issue": 40}
    assert s["SIMD0 w1"] == {**dict.fromkeys(STATES, 0), "issue": 20, "ready": 20}
    assert s["SIMD1 w0"] == {**dict.fromkeys(STATES, 0), "empty": 20, "loadcnt": 20}
    assert tl.cycles == len(tl) == 40 and tl.start == 100


def test_record_by_name_gaps_read_empty_and_growth():
    tl = Timeline(["x", "y"])
    tl.record(10, 0, "barrier")
    tl.record(10, 1, "kmcnt")
    tl.record(10_009, 1, "held")                   # past the initial capacity
    tl.add_cycle(10_005, [tl.code("dependency"), tl.code("structural")])
    s = tl.summary()
    assert tl.cycles == 10_000
    assert s["x"] == {**dict.fromkeys(STATES, 0), "barrier": 1, "dependency": 1, "empty": 9998}
    assert s["y"] == {**dict.fromkeys(STATES, 0), "kmcnt": 1, "structural": 1, "held": 1,
                      "empty": 9997}


# ---- errors ----------------------------------------------------------------------
def test_bad_state_names():
    with pytest.raises(ValueError, match=r"unknown state 'stalled'.*known states: issue"):
        Timeline(["w0"], states=["issue", "empty", "stalled"])
    tl = Timeline(["w0"], states=["issue", "empty"])
    with pytest.raises(ValueError, match=r"'loadcnt'; this timeline's states: issue, empty"):
        tl.record(0, 0, "loadcnt")
    with pytest.raises(ValueError, match="unknown state 'Issue'"):
        tl.code("Issue")
    assert tl.cycles == 0                          # nothing recorded by the failed calls


@pytest.mark.parametrize("kwargs,needle", [
    ({"lanes": []}, "at least one lane"),
    ({"lanes": ["a", "a"]}, "duplicate lane"),
    ({"lanes": ["a"], "states": ["issue", "empty", "issue"]}, "duplicate states"),
    ({"lanes": ["a"], "states": ["issue", "ready"]}, "must include 'empty'"),
])
def test_bad_construction(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        Timeline(**kwargs)


def test_bad_records():
    tl = Timeline(["a", "b"])
    with pytest.raises(ValueError, match="1 codes for 2 lanes"):
        tl.add_cycle(0, [0])
    with pytest.raises(ValueError, match=r"out of range 0\.\.11"):
        tl.add_cycle(0, [0, 12])
    with pytest.raises(ValueError, match="out of range"):
        tl.add_cycle(0, [-1, 0])
    with pytest.raises(ValueError, match="no cycles recorded"):
        tl.render()
    tl.add_cycle(5, [0, 1])
    with pytest.raises(ValueError, match="precedes the first recorded cycle 5"):
        tl.add_cycle(4, [0, 1])
    with pytest.raises(ValueError, match=r"lane 2 out of range 0\.\.1"):
        tl.record(6, 2, "issue")
    with pytest.raises(ValueError, match="width must be at least 1"):
        tl.render(width=0)
    assert tl.cycles == 1
