"""describe_cpu: the CPU's name and vector instructions, as benchmarks and evaluations record them."""
from core.runtime.machine import describe_cpu

CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu sse2 avx2 fma avx512f avx512bw avx512_bf16 amx_bf16 amx_tile

processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu sse2 avx2 fma avx512f avx512bw avx512_bf16 amx_bf16 amx_tile
"""


def test_name_and_vector_flags_come_from_the_first_processor(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(CPUINFO)
    assert describe_cpu(path) == {"cpu": "Intel(R) Xeon(R) Platinum 8480+",
                                  "vector_flags": ["avx2", "fma", "avx512f", "avx512_bf16", "amx_tile"]}
    path.write_text("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2 fma\n")
    assert describe_cpu(path) == {"cpu": "AMD EPYC", "vector_flags": ["avx2", "fma"]}


def test_without_cpuinfo_it_still_names_something(tmp_path):
    info = describe_cpu(tmp_path / "missing")
    assert info["cpu"] and info["vector_flags"] == []
