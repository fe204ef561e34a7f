"""The chemist's properties from atom environments equal RDKit's functions bitwise, and the
checks that guard that path turn it off when its answers are wrong."""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from core.data import batch_properties as bp
from core.data.chem import parse_smiles
from core.data.properties import PROPERTY_COLUMNS, molecule_properties

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "moses_sample.csv.gz"
# what the binary form's reader leaves to RDKit's functions, or the keys do not cover: explicit
# and isotopic hydrogen atoms, a dummy-free metal complex, fragments, radicals, hypervalent
# atoms, charges up to +3, a 300-atom chain (more than the reader's 255 atoms)
AWKWARD = ("[2H]C([2H])([2H])O", "[H][H]", "[Pt](Cl)(Cl)(N)N", "[Na+].[Cl-]", "C[CH2]", "F[S](F)(F)(F)(F)F",
           "[Fe+3]", "C" * 300, "C1CC1N1CC1", "O=[N+]([O-])c1ccc([O-])cc1", "c1ccc2c(c1)[nH]c1ccccc12", "CC(=O)O[Hg]C")


@pytest.fixture
def fresh_memory(monkeypatch):
    """A process memory that has learned nothing and run no check."""
    memory = bp._Memory()
    monkeypatch.setattr(bp, "_memory", memory)
    return memory


def _sample(n: int) -> list:
    with gzip.open(SAMPLE, "rt") as f:
        lines = f.read().split("\n")[1: n + 1]
    return [parse_smiles(line.split(",")[0])[0] for line in lines]


def _reference(mols) -> np.ndarray:
    return np.array([bp.reference_properties(m) for m in mols])


def test_columns_are_the_reports_columns():
    assert bp.COLUMNS == PROPERTY_COLUMNS
    assert len(bp._functions()) == len(PROPERTY_COLUMNS)


def test_many_molecules_equal_rdkits_functions_bitwise(fresh_memory):
    mols = _sample(1500) + [parse_smiles(s)[0] for s in bp.CHECK_SMILES + AWKWARD]
    got = np.concatenate([bp.batch_properties(mols[k: k + 400]) for k in range(0, len(mols), 400)])
    assert fresh_memory.checked is True  # the fast path ran: the check and every comparison agreed
    assert 0 < fresh_memory.learned and fresh_memory.seen > 1000
    assert np.array_equal(got, _reference(mols))


def test_a_molecule_alone_gets_the_bits_it_gets_in_a_batch(fresh_memory):
    mols = _sample(300)
    batch = bp.batch_properties(mols)
    alone = np.array([bp.batch_properties([m])[0] for m in mols[::37]])
    assert np.array_equal(alone, batch[::37])


def test_molecule_properties_keeps_rows_in_order_with_gaps():
    table = molecule_properties(["CCO", None, "", "not a smiles", "c1ccccc1O", "C" * 300])
    assert np.isnan(table[1:4]).all()
    expected = _reference([parse_smiles(s)[0] for s in ("CCO", "c1ccccc1O", "C" * 300)])
    assert np.array_equal(table[[0, 4, 5]], expected)


def test_a_wrong_remembered_answer_is_caught_and_every_molecule_goes_to_rdkit(fresh_memory):
    """Corrupt what the process remembers: the spot check finds it, says so, and the batch's
    values are RDKit's all the same."""
    mols = _sample(1200)
    bp.batch_properties(mols[:600])
    assert fresh_memory.checked is True
    fresh_memory.values[: fresh_memory.size, 0] += 0.5  # every atom's Crippen contribution
    with pytest.warns(RuntimeWarning, match="disagreed with RDKit"):
        got = bp.batch_properties(mols[600:])
    assert fresh_memory.checked is False
    assert np.array_equal(got, _reference(mols[600:]))
    assert np.array_equal(bp.batch_properties(mols[:50]), _reference(mols[:50]))  # and from then on


def test_a_key_that_meets_two_answers_turns_the_path_off(fresh_memory, monkeypatch):
    """Keys too coarse to tell atoms apart (here: one key for every atom) are found when a
    molecule is learned from, before any value is used."""
    real = bp._atom_keys

    def one_key(decoded, counts, bond_counts):
        keys, usable, ring = real(decoded, counts, bond_counts)
        return np.zeros_like(keys), usable, ring

    monkeypatch.setattr(bp, "_atom_keys", one_key)
    mols = _sample(40)
    with pytest.warns(RuntimeWarning, match="disagreed with RDKit"):
        got = bp.batch_properties(mols)
    assert fresh_memory.checked is False
    assert np.array_equal(got, _reference(mols))


def test_the_pattern_definitions_are_rdkits(fresh_memory):
    """The donor, acceptor and rotor patterns count what RDKit's functions count."""
    from rdkit.Chem import rdMolDescriptors

    donor, acceptor, left, right = bp._patterns()
    for mol in _sample(400):
        assert len(mol.GetSubstructMatches(donor)) == rdMolDescriptors.CalcNumHBD(mol)
        assert len(mol.GetSubstructMatches(acceptor)) == rdMolDescriptors.CalcNumHBA(mol)
        lefts = {m[0] for m in mol.GetSubstructMatches(left)}
        rights = {m[0] for m in mol.GetSubstructMatches(right)}
        rotors = sum(1 for b in mol.GetBonds() if b.GetBondTypeAsDouble() == 1 and not b.IsInRing() and (
            (b.GetBeginAtomIdx() in lefts and b.GetEndAtomIdx() in rights)
            or (b.GetEndAtomIdx() in lefts and b.GetBeginAtomIdx() in rights)))
        assert rotors == rdMolDescriptors.CalcNumRotatableBonds(mol)


def test_a_process_forked_while_another_thread_computes_gets_a_working_memory(fresh_memory):
    """Screening forks its workers, perhaps while the app computes properties on another thread:
    the fork waits for the memory's lock, and the child computes with a lock of its own (a lock
    copied while held would block the child for ever)."""
    import multiprocessing as mp
    import threading
    import time

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork on this platform")
    mols = _sample(20)
    held = threading.Event()

    def hold():
        with fresh_memory.lock:
            held.set()
            time.sleep(0.5)

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait()
    context = mp.get_context("fork")
    with context.Pool(1) as pool:
        got = pool.apply_async(bp.batch_properties, (mols,)).get(timeout=60)
    thread.join()
    assert np.array_equal(got, _reference(mols))
