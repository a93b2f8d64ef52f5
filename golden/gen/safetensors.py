"""safetensors, written and read by hand (the `safetensors` package is not a dependency).

Format: an 8-byte little-endian header length, a JSON header padded with spaces to a multiple
of 8, then the raw little-endian tensor bytes in the order of the sorted names.
"""
import json
import struct

import numpy as np
import torch

_DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}
_NUMPY = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


def write(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        tensor = tensors[name].detach().contiguous()
        dtype = _DTYPES[tensor.dtype]
        data = tensor.numpy().astype(_NUMPY[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read(path):
    """Returns {name: numpy array}."""
    with open(path, "rb") as f:
        blob = f.read()
    (length,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + length])
    header.pop("__metadata__", None)
    body = blob[8 + length:]
    arrays = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        arrays[name] = np.frombuffer(body[begin:end], dtype=_NUMPY[entry["dtype"]]).reshape(entry["shape"])
    return arrays
