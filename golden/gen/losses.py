"""Label-smoothed cross-entropy in the two forms of core/backend.h (mean over non-pad labels)."""
import torch
import torch.nn.functional as F

FORMS = {
    "uniform": "F.cross_entropy(label_smoothing=eps, ignore_index=pad): q = (1 - eps) onehot + eps / V",
    "fairseq": "by hand (PyTorch has no such form): q = (1 - eps) onehot + eps / (V - 1) on every other class",
}


def cross_entropy(logits, labels, pad, eps, form):
    """logits [N, V], labels [N]."""
    if form == "uniform":
        return F.cross_entropy(logits, labels, ignore_index=pad, label_smoothing=eps)
    logp = F.log_softmax(logits, dim=-1)
    target = logp.gather(1, labels[:, None])[:, 0]
    others = logp.sum(dim=-1) - target
    per_row = -(1 - eps) * target - eps / (logits.shape[1] - 1) * others
    keep = labels != pad
    return per_row[keep].sum() / keep.sum()
