"""Memory per row is bounded before RDKit sees the row: a legal SMILES or molblock whose ring
perception would take gigabytes (a fused ladder) is a rejected row with its reason, through every
reader; and a parsing worker's address space is capped, so a parse that runs away costs one row.

Old code parsed these ladders: the 500-ring ones below in about 100 MB, the 5,000-ring one in about
20 GB, so that one only ever runs in a child process with an address-space limit."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from core import GLocalKD, load, read_report
from core.data.chem import MAX_RING_BONDS, molblock_size, parse_molblock, parse_smiles, ring_bonds
from core.runtime.memory import parse_size
from core.screening.pipeline import SourceRow, screen
from core.screening.featurize import featurize_chunk
from tests.conftest import DEMO_DATA


def ladder_smiles(atoms: int) -> str:
    """A fused ladder of cyclobutane rings, about two characters per atom: atom i is bonded to
    i + 1 and, for even i, to i + 3 (ring-closure labels 1 and 2, reused)."""
    out = []
    for pos in range(atoms):
        s = "C"
        if pos >= 3 and pos % 2 == 1:
            s += "1" if (pos // 2) % 2 == 1 else "2"
        if pos % 2 == 0 and pos + 3 < atoms:
            s += "1" if (pos // 2) % 2 == 0 else "2"
        out.append(s)
    return "".join(out)


def ladder_molblock(atoms: int) -> str:
    """The same ladder as a V3000 molblock, written by hand (RDKit's own writer perceives rings)."""
    bonds = [(i, i + 1) for i in range(atoms - 1)] + [(i, i + 3) for i in range(0, atoms - 3, 2)]
    lines = ["ladder", "  hand", "", "  0  0  0     0  0            999 V3000", "M  V30 BEGIN CTAB",
             f"M  V30 COUNTS {atoms} {len(bonds)} 0 0 0", "M  V30 BEGIN ATOM"]
    lines += [f"M  V30 {i + 1} C {i * 1.5:.4f} 0 0 0" for i in range(atoms)]
    lines += ["M  V30 END ATOM", "M  V30 BEGIN BOND"]
    lines += [f"M  V30 {k + 1} 1 {a + 1} {b + 1}" for k, (a, b) in enumerate(bonds)]
    lines += ["M  V30 END BOND", "M  V30 END CTAB", "M  END"]
    return "\n".join(lines) + "\n"


OVER = 2 * MAX_RING_BONDS + 4  # atoms of a ladder just over the limit (251 ring bonds: atoms / 2 - 1)


def test_ring_bonds_are_counted_from_the_text():
    assert ring_bonds(ladder_smiles(10)) == 4 and ring_bonds(ladder_smiles(OVER)) == MAX_RING_BONDS + 1
    for smiles, rings in (("c1ccccc1", 1), ("C12CC1C2", 2), ("C%10CC%10", 1), ("C%(123)CC%(123)", 1),
                          ("[13CH3][NH4+]", 0), ("[2H]C1CC1[C@@H]2CC2", 2), ("CCO", 0)):
        assert ring_bonds(smiles) == rings, smiles


def test_a_ladder_over_the_limit_is_refused_and_one_under_it_parses():
    mol, reason = parse_smiles(ladder_smiles(OVER))
    assert mol is None and f"{MAX_RING_BONDS + 1} ring-closure bonds, more than the limit of {MAX_RING_BONDS}" \
        in reason
    mol, reason = parse_smiles(ladder_smiles(OVER - 6))
    assert mol is not None and reason == "" and mol.GetRingInfo().NumRings() == MAX_RING_BONDS - 2
    mol, reason = parse_molblock(ladder_molblock(OVER))
    assert mol is None and "ring-closure bonds" in reason
    assert parse_molblock(ladder_molblock(40))[0].GetNumAtoms() == 40
    assert molblock_size(ladder_molblock(40)) == (40, 19) and molblock_size("not\\na\\nmolblock") is None


def test_the_20000_character_ladder_is_refused_within_a_small_memory_limit():
    """The issue's case: 9,998 atoms in 19,994 characters. Before the guard RDKit's parse alone
    reached about 20 GB; here the child has 1.5 GB of address space more than at start."""
    code = textwrap.dedent("""
        import resource, sys
        from core.runtime.memory import limit_address_space
        from core.data.chem import parse_smiles
        from tests.core.data.test_parse_limits import ladder_smiles
        limit_address_space(1536 * 1024**2)
        smiles = ladder_smiles(9998)
        mol, reason = parse_smiles(smiles)
        print(len(smiles), mol is None, reason[:60])
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split(None, 2)[:2] == ["19994", "True"] and "4,998 ring-closure bonds" in run.stdout


@pytest.mark.parametrize("kind", ["smi", "csv", "sdf"])
def test_every_reader_rejects_the_ladder_as_a_row(tmp_path, kind):
    path = tmp_path / f"lib.{kind}"
    if kind == "smi":
        path.write_text(f"CCO ethanol\n{ladder_smiles(OVER)} ladder\nc1ccccc1 benzene\n")
    elif kind == "csv":
        path.write_text(f"smiles,id\nCCO,ethanol\n{ladder_smiles(OVER)},ladder\nc1ccccc1,benzene\n")
    else:
        from rdkit import Chem

        def record(block, name):
            return name + block[block.index("\n"):] + "$$$$\n"
        path.write_text(record(Chem.MolToMolBlock(Chem.MolFromSmiles("CCO")), "ethanol")
                        + record(ladder_molblock(OVER), "ladder")
                        + record(Chem.MolToMolBlock(Chem.MolFromSmiles("c1ccccc1")), "benzene"))
    graphs = load(path)
    assert [m.id for m in graphs.meta] == ["ethanol", "benzene"]
    assert len(graphs.rejects) == 1 and "ring-closure bonds" in graphs.rejects[0].reason


def test_the_screening_workers_reject_the_ladder_as_a_row():
    chunk = featurize_chunk([SourceRow(1, "a", "a", "CCO", None), SourceRow(2, "l", "l", ladder_smiles(OVER), None)])
    assert chunk["ids"] == ["a"] and "ring-closure bonds" in chunk["rejects"][0][3]


def test_sizes():
    assert parse_size("2G") == 2 * 1024**3 and parse_size("512m") == 512 * 1024**2 and parse_size("1.5GiB") \
        == int(1.5 * 1024**3) and parse_size("1000") == 1000 and parse_size("off") is None
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def test_the_address_space_limit_turns_a_runaway_allocation_into_a_memory_error():
    code = textwrap.dedent("""
        import resource
        from core.runtime.memory import limit_address_space
        limit = limit_address_space(256 * 1024**2)
        assert resource.getrlimit(resource.RLIMIT_AS)[0] == limit
        try:
            block = bytearray(1024**3)
            print("allocated")
        except MemoryError:
            print("refused")
        small = bytearray(16 * 1024**2)  # the process goes on
        print("alive")
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.split() == ["refused", "alive"], run.stderr[-2000:]


def test_a_parse_past_the_workers_memory_limit_is_one_rejected_row(tmp_path, monkeypatch):
    """With the ring guard lifted (the workers are forked: they see it lifted too), a ladder of 600
    rings whose parse takes several hundred MB, under a worker limit of 100 MB: its row is rejected,
    the other rows are scored. Without a limit on the parsing workers it was parsed and scored."""
    herg = load(DEMO_DATA / "herg.tab")
    model = GLocalKD(epochs=2, hidden_dim=16, out_dim=8, device="cpu").fit(herg.subset(range(60)))
    library = tmp_path / "lib.smi"
    library.write_text("".join(f"{herg.meta[i].smiles} m{i}\n" for i in range(20))
                       + f"{ladder_smiles(1202)} ladder\n")
    monkeypatch.setattr("core.data.chem.MAX_RING_BONDS", 10**4, raising=False)
    monkeypatch.setenv("GLOCALKD_PARSE_MEMORY", "100M")
    summary = screen(model, library, tmp_path / "r.csv", chunk_size=8, workers=1)
    report = read_report(summary.report)
    assert len(report) == 20 and [r.id for r in report.rejects] == ["ladder"]
    assert "memory" in report.rejects[0].reason or "died" in report.rejects[0].reason


def test_a_molblock_claiming_a_huge_atom_count_is_refused_without_reading_on():
    block = ladder_molblock(40).replace("COUNTS 40 ", "COUNTS 4000000000000 ")
    assert molblock_size(block) == (4_000_000_000_000, 0)
    mol, reason = parse_molblock(block)
    assert mol is None and "atoms, more than the limit" in reason
