"""Structure pictures, query similarity and the common substructure of two molecules."""
from __future__ import annotations

import io

import numpy as np
import pytest

from core import (DataError, SimilarityIndex, common_substructure, pair_png, query_similarities, structure_grid_png,
                  structure_png, structure_pixels, same_molecule)


def _size(png: bytes) -> tuple[int, int]:
    from PIL import Image

    return Image.open(io.BytesIO(png)).size


def test_a_structure_is_a_png_of_the_asked_size_and_nothing_for_a_bad_smiles():
    png = structure_png("CC(=O)Nc1ccc(O)cc1", 120, 90)
    assert png.startswith(b"\x89PNG") and _size(png) == (120, 90)
    assert structure_png("not_a_smiles", 120, 90) == b"" and structure_png("", 120, 90) == b""
    batch = structure_pixels(["CCO", "xx", "c1ccccc1"], 60, 40)
    assert [len(p) for p in batch] == [60 * 40 * 4, 0, 60 * 40 * 4]


def test_a_structures_pixels_are_its_png_decoded():
    from PIL import Image

    png = structure_png("CC(=O)Nc1ccc(O)cc1", 90, 60)
    decoded = np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))
    pixels = np.frombuffer(structure_pixels(["CC(=O)Nc1ccc(O)cc1"], 90, 60)[0], np.uint8).reshape(60, 90, 4)
    assert (pixels == decoded).all() and (pixels[..., 3] == 255).all()  # opaque
    assert (pixels[..., :3] < 128).any() and (pixels[..., :3] == 255).all(-1).mean() > 0.5  # ink on white


def test_a_grid_keeps_one_cell_per_molecule_even_one_that_does_not_parse():
    png = structure_grid_png(["CCO", "xx", "c1ccccc1", "CCN", "CCC"], ["a", "b", "c", "d", "e"], per_row=2,
                             cell=(100, 80))
    assert _size(png) == (200, 240)  # 5 molecules, 2 a row: 3 rows
    assert structure_grid_png([], []) == b""


def test_query_similarity_is_one_for_the_same_molecule_and_orders_by_likeness():
    smiles = ["c1ccccc1CCCC", "OC(=O)C1CCCCC1", "c1ccccc1CCCN", "", "bad(", "c1ccccc1CCCCC"]
    sims = query_similarities("CCCCc1ccccc1", smiles)  # the first molecule, written otherwise
    assert sims[0] == pytest.approx(1.0)
    assert np.isnan(sims[3]) and np.isnan(sims[4])
    order = [int(k) for k in np.argsort(-np.nan_to_num(sims, nan=-1), kind="stable")]
    assert order[:3] == [0, 5, 2] and order[3] == 1  # the butylbenzenes, the amine, then the acid
    assert 0 <= sims[1] < sims[2] < sims[5] < 1


def test_an_invalid_query_says_so_and_an_index_answers_many_queries():
    with pytest.raises(DataError, match="not a valid SMILES"):
        query_similarities("C1CC(", ["CCO"])
    index = SimilarityIndex(["CCO", "CCN", "c1ccccc1"])
    assert index.similarities("CCO")[0] == pytest.approx(1.0)
    assert index.similarities("c1ccccc1")[2] == pytest.approx(1.0)


def test_the_common_substructure_holds_the_shared_atoms_and_the_pair_is_drawn():
    a, b = common_substructure("c1ccccc1CCO", "NCCc1ccccc1")
    assert len(a) == len(b) == 8  # the ring and two carbons; O and N differ
    assert 8 not in a and sorted(a) == list(range(8))  # all but the oxygen
    assert 0 not in b  # b's nitrogen
    assert common_substructure("CCO", "bad(") == ([], [])
    png = pair_png("c1ccccc1CCO", "NCCc1ccccc1", ("query", "nearest"), cell=(200, 150))
    assert _size(png) == (400, 150)
    assert pair_png("CCO", "") == b""


def test_the_same_molecule_is_told_apart_from_a_similar_one():
    assert same_molecule("OCCc1ccccc1", "c1ccccc1CCO")  # written otherwise
    assert not same_molecule("C[C@H](N)O", "C[C@@H](N)O")  # the mirror image: the same fingerprint bits
    assert not same_molecule("c1ccccc1CCO", "c1ccccc1CCN")
    assert not same_molecule("CCO", "bad(") and not same_molecule("", "")
