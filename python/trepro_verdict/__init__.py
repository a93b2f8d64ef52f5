"""trepro-verdict: a verdict on a Transformer's outputs against transformer-repro's golden cases,
without the C++ build (numpy and safetensors only). See python/README.md.

    python -m trepro_verdict --model mymodule:my_callable --out report.json

Submodules: naming (nn.Transformer names <-> the project's), golden (the manifest and the
cases), compare (the tolerance rules), reference (a plain numpy model: the low-precision
baseline), expectations (known failures), report (the JSON report), verdict (runs a callable).
Importing the package imports nothing else: golden/gen imports `naming` alone.
"""

__version__ = "0.1.0"
