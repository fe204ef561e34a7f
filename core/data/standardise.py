"""Standardising molecules before they are featurised: RDKit's ``rdMolStandardize``.

Three steps, in this order, on every molecule of a model that standardises (the choice is the
model's, stored in its file, so scoring and screening prepare molecules as training did):

1. keep the largest fragment (salts, counter-ions and solvents go);
2. neutralise charges where a neutral form exists (``Uncharger``);
3. the canonical tautomer (``TautomerEnumerator.Canonicalize``), stereocentres and double-bond
   stereo kept (so a tautomer that would erase them is not chosen), its enumeration capped at
   :data:`MAX_TAUTOMERS` tautomers and :data:`MAX_TRANSFORMS` transforms: RDKit's defaults
   (1,000 each) took 9.2 ms a molecule on the hERG demo, the caps 5.7 ms (a quiet machine),
   with the same canonical tautomer for every one of its 655 molecules (docs/app.md).

A molecule the steps fail on is rejected with the reason, never dropped in silence. The rules'
version, :data:`RULES`, is part of a standardising model's fingerprint: a report scored by the
rules before (RDKit's defaults, which dropped stereo at tautomeric sites and so could choose
another tautomer) is not taken for one of this model's, so a resume or a merge never mixes them.
"""
from __future__ import annotations

from rdkit import Chem

STEPS = "largest fragment, neutralised, canonical tautomer"
MAX_TAUTOMERS = 100
MAX_TRANSFORMS = 100
RULES = 2  # the standardising rules' version: 2 keeps stereocentres and double-bond stereo (1 dropped them)

_TOOLS = None  # built once per process (workers of the screening pipeline build their own)


def _tools():
    global _TOOLS
    if _TOOLS is None:
        from rdkit.Chem.MolStandardize import rdMolStandardize

        enumerator = rdMolStandardize.TautomerEnumerator()
        enumerator.SetMaxTautomers(MAX_TAUTOMERS)
        enumerator.SetMaxTransforms(MAX_TRANSFORMS)
        # RDKit's defaults drop the stereo of atoms and bonds next to a tautomeric site: L-alanine
        # became CC(N)C(=O)O, one molecule with its enantiomer, and 97 of the hERG demo's molecules lost
        # stereocentres that the report, the SDF export and the drawing then lacked
        enumerator.SetRemoveSp3Stereo(False)
        enumerator.SetRemoveBondStereo(False)
        _TOOLS = (rdMolStandardize.LargestFragmentChooser(), rdMolStandardize.Uncharger(), enumerator)
    return _TOOLS


def standardise_mol(mol: Chem.Mol) -> tuple[Chem.Mol | None, str]:
    """The standardised molecule (largest fragment, neutralised, canonical tautomer).

    Args:
        mol: a parsed molecule (not changed).

    Returns:
        (the standardised molecule, "") or (None, the reason it could not be standardised).
    """
    chooser, uncharger, enumerator = _tools()
    try:
        out = chooser.choose(mol)
        out = uncharger.uncharge(out)
        # parse_smiles sanitises by hand, which leaves double bonds without their E/Z flags: the
        # tautomer step reads those flags, so it would drop the stereo that the SMILES wrote
        Chem.AssignStereochemistry(out, cleanIt=True, force=True)
        out = enumerator.Canonicalize(out)
    except Exception as exc:  # RDKit raises its own types (ValueError, RuntimeError, MolSanitizeException)
        return None, f"standardisation failed ({type(exc).__name__}: {str(exc).strip() or 'no detail'})"
    if out is None or out.GetNumAtoms() == 0:
        return None, "standardisation failed (no atoms left)"
    return out, ""


def standardise_smiles(smiles: str) -> tuple[str | None, str]:
    """The standardised form of a SMILES, as canonical SMILES.

    Args:
        smiles: a SMILES string.

    Returns:
        (the standardised canonical SMILES, "") or (None, the reason).
    """
    from core.data.chem import parse_smiles

    mol, reason = parse_smiles(smiles)
    if mol is None:
        return None, reason
    out, reason = standardise_mol(mol)
    return (Chem.MolToSmiles(out), "") if out is not None else (None, reason)


__all__ = ["STEPS", "MAX_TAUTOMERS", "MAX_TRANSFORMS", "RULES", "standardise_mol", "standardise_smiles"]


def check_standardise_request(requested: bool, model) -> None:
    """Refuse to standardise for a model trained on molecules as read.

    The model decides whether molecules are standardised (its training did or did not); asking a
    model trained without it to standardise is an error, since its scores would not mean what they
    meant in training. Every entry point that takes the request (``score``, ``screen`` on this
    machine or on a cluster) asks this one function.

    Args:
        requested: whether the user asked to standardise (``--standardise``).
        model: the loaded detector (its ``standardises`` says how it was trained).

    Raises:
        ParameterError: ``requested`` for a model trained without standardising.
    """
    from core.errors import ParameterError

    if requested and not getattr(model, "standardises", False):
        raise ParameterError("{standardise}: this model was trained on molecules as read; scoring standardised "
                             "molecules with it would not compare with its training. Train with {standardise} "
                             "(or leave the option out)", "standardise")
