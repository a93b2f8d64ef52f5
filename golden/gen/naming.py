"""PyTorch parameter names -> the project's names (docs/conformance.md, "Parameter names"), by renaming only.

nn.MultiheadAttention packs q, k, v into in_proj_weight [3d, d] / in_proj_bias [3d]; the
project has q_proj, k_proj, v_proj. Everything else is a rename:
  self_attn.out_proj -> self_attn.o_proj     multihead_attn -> cross_attn
  linear1 -> ffn.w1    linear2 -> ffn.w2     norm1/2/3 -> norm1/2/3
The renaming rules live in one place, python/trepro_verdict/naming.py (the Python verdict
package, numpy only); this module applies them to torch modules and tensors.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from trepro_verdict import naming as _names  # noqa: E402


def project_tensors(torch_name, tensor, prefix_map):
    """{project name: tensor} for one PyTorch tensor (three for a packed q/k/v projection).

    prefix_map rewrites the module path first, e.g. {"transformer.encoder.": "encoder."}.
    """
    names = _names.project_name_parts(torch_name, prefix_map)
    if len(names) == 3:
        return dict(zip(names, torch.chunk(tensor, 3, dim=0)))
    return {names[0]: tensor}


def load_project_values(module, values, prefix_map):
    """Copies project-named values into a PyTorch module's parameters (the inverse renaming)."""
    with torch.no_grad():
        for torch_name, param in module.named_parameters():
            parts = project_tensors(torch_name, param, prefix_map)
            param.copy_(torch.cat([values[name].to(param.dtype) for name in parts]))


def _project_all(module, prefix_map, pick):
    projected = {}
    for torch_name, param in module.named_parameters():
        projected.update(project_tensors(torch_name, pick(param), prefix_map))
    return projected


def project_values(module, prefix_map):
    return _project_all(module, prefix_map, lambda p: p.detach().clone())


def project_grads(module, prefix_map):
    return _project_all(module, prefix_map, lambda p: p.grad)


def project_names(module, prefix_map):
    """Project names and shapes of a module's parameters."""
    return {n: tuple(t.shape) for n, t in _project_all(module, prefix_map, lambda p: p.detach()).items()}
