"""The GCN encoder shared by the target and predictor networks (the paper's Eqs. 5-9)."""
from __future__ import annotations

import torch
from torch import nn

from core.data.adjacency import gcn_adjacency
from core.nn.row_groups import GroupedPropagation
from core.nn.sparse import propagate


def normalized_adjacency(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Build the GCN's normalised adjacency D^-1/2 (A + I) D^-1/2.

    Args:
        edge_index: edges as a (2, edges) integer tensor, sources in row 0, destinations in row 1.
        num_nodes: the number of nodes (isolated nodes included).

    Returns:
        A sparse CSR (num_nodes, num_nodes) tensor with rows as destinations.
    """
    return gcn_adjacency(edge_index, num_nodes)


class GCNLayer(nn.Module):
    """One GCN layer's weights, named and shaped as torch-geometric's ``GCNConv``'s.

    The weights are ``lin.weight`` (out x in) and ``bias``, so model files read the same. The
    products are :class:`GCNEncoder`'s own (sparse Â times dense features), which is why the layer
    is not a ``GCNConv``: importing torch-geometric costs more than a second, and scoring never
    needs it.

    The new weights draw as many random numbers as a ``GCNConv`` (whose ``Linear`` draws its
    initial weights twice) so that a seed gives the weights it gave with ``GCNConv`` (a test
    compares them); :meth:`GCNEncoder.reset_parameters` sets them.

    Args:
        in_channels: the width of the input node features.
        out_channels: the width of the output node features.
        bias: whether the layer has a bias (zeros until the encoder sets it).
    """

    def __init__(self, in_channels: int, out_channels: int, bias: bool = True):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.lin = nn.Linear(in_channels, out_channels, bias=False)  # its initialisation: one draw
        with torch.no_grad():
            self.lin.weight.uniform_()  # the second draw, as GCNConv's
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None


class GCNEncoder(nn.Module):
    """``num_layers`` GCN layers with ReLU between them; Kaiming-uniform weights, zero biases.

    The output layer is linear. The paper writes a ReLU there too, but then every output
    dimension the predictor's ReLU has switched off for a node type can never be learned
    (zero gradient) while the target's is positive: training stalls. The authors' released
    code has no activation there either. The encoder returns node embeddings; the graph
    embedding is their max-pool (done by the caller).

    Args:
        in_dim: the width of the input node features.
        hidden_dim: the width of every hidden layer.
        out_dim: the width of the output node embeddings.
        num_layers: the number of GCN layers, at least 1.
        normalize: scale each layer's node embeddings to unit L2 norm, as the authors' released
            code does (the paper's equations leave it out); it keeps the distillation targets on
            one scale whatever the raw feature magnitudes are.
        bias: give the layers biases; ``False`` is for one-class objectives (Deep SVDD), where
            biases let the network map everything to the centre.

    Raises:
        ValueError: if ``num_layers`` is below 1.
    """

    def __init__(self, in_dim: int, hidden_dim: int = 512, out_dim: int = 256, num_layers: int = 3,
                 normalize: bool = False, bias: bool = True):
        super().__init__()
        self.normalize = normalize
        if num_layers < 1:
            raise ValueError("num_layers must be at least 1")
        dims = [in_dim] + [hidden_dim] * (num_layers - 1) + [out_dim]
        self.convs = nn.ModuleList(
            GCNLayer(a, b, bias=bias) for a, b in zip(dims[:-1], dims[1:])
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw new weights (Kaiming-uniform, for ReLU) and set the biases to zero."""
        for conv in self.convs:
            nn.init.kaiming_uniform_(conv.lin.weight, nonlinearity="relu")
            if conv.bias is not None:
                nn.init.zeros_(conv.bias)

    def forward(self, x: torch.Tensor, adj: torch.Tensor, matmul_dtype: torch.dtype | None = None,
                adj_symmetric: bool = False, groups: GroupedPropagation | None = None) -> torch.Tensor:
        """Compute the node embeddings of a batch.

        Each layer is Â X W + b, computed as (Â X) W when that is narrower (the first layer), else
        Â (X W); the bias is fused into the dense product where it can be, and the bias and ReLU
        otherwise run in place, in training too (no product here keeps its output for the backward
        pass): fewer large tensors to allocate. On one thread an AIDS epoch took 0.316-0.331 s of
        CPU against 0.328-0.354 s out of place (best of 6 epochs, interleaved runs), with bitwise
        the same weights.

        Args:
            x: node features, shape (nodes, in_dim).
            adj: the batch's normalised adjacency Â, sparse CSR (nodes, nodes), rows as
                destinations (:func:`normalized_adjacency`).
            matmul_dtype: ``torch.bfloat16`` runs the dense products in bfloat16 (inputs rounded to
                8 significant bits, results back in float32): several times faster on CPUs with AMX
                or AVX-512 BF16 and on GPUs; for scoring only (see ``docs/scaling.md`` for its
                agreement with float32). None (the default) keeps float32.
            adj_symmetric: Â equals its transpose (an undirected graph), which makes the backward
                pass cheaper (see :func:`propagate`).
            groups: :meth:`GroupedPropagation.build` of this batch: runs the layers on groups of
                nodes that look the same to them, and only the last propagation on nodes, giving the
                same embeddings for far fewer products when many nodes look alike (molecules with
                discrete atom features). None computes node by node.

        Returns:
            The node embeddings, shape (nodes, out_dim), float32.
        """
        last = len(self.convs) - 1
        if groups is not None:
            x = groups.pick(x)
        for i, conv in enumerate(self.convs):
            weight, bias = conv.lin.weight, conv.bias
            if conv.in_channels < conv.out_channels:  # (Â X) W
                x = self._propagate(i, x, adj, adj_symmetric, groups)
                x = _product(x, weight, bias, matmul_dtype)
            else:  # Â (X W)
                x = self._propagate(i, _product(x, weight, None, matmul_dtype), adj, adj_symmetric, groups)
                if bias is not None:
                    x = x.add_(bias)
            if i < last:
                x = x.relu_()
            if self.normalize:
                x = nn.functional.normalize(x, p=2.0, dim=1)
        return x

    @staticmethod
    def _propagate(i: int, x: torch.Tensor, adj: torch.Tensor, adj_symmetric: bool,
                   groups: GroupedPropagation | None) -> torch.Tensor:
        return propagate(adj, x, adj_symmetric) if groups is None else groups.propagate(i, x)


# MKL multiplies fewer than 16 rows with other kernels, whose last bits differ from those of
# the kernels for more rows (measured here for 49-, 64- and 512-wide rows: 1-2 and 1-15 rows).
# A product of fewer rows is padded to this many, so that a row's result never depends on how
# many rows share its product: grouped rows (core.nn.row_groups) are often that few.
MIN_PRODUCT_ROWS = 16


def _product(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
             matmul_dtype: torch.dtype | None) -> torch.Tensor:
    """X Wᵀ (+ b): in float32 with the bias fused into the product, or with the product's
    inputs in ``matmul_dtype`` and its result back in float32."""
    rows = x.shape[0]
    if 0 < rows < MIN_PRODUCT_ROWS:
        padded = torch.cat([x, x.new_zeros(MIN_PRODUCT_ROWS - rows, x.shape[1])])
        return _product(padded, weight, bias, matmul_dtype)[:rows]
    if matmul_dtype is not None:
        x = (x.to(matmul_dtype) @ weight.t().to(matmul_dtype)).float()
        return x if bias is None else x.add_(bias)
    return x @ weight.t() if bias is None else torch.addmm(bias, x, weight.t())
