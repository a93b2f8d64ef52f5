"""Assembles scripts/gpu-check's one JSON report from what it left in the run folder: the gtest
XML files of the cuda instantiations (tests/*.xml), the Google Benchmark JSON files, the PyTorch
peer's times (cuda_torch_peer.json), the compare-kernels reports and training runs of the two
precisions, and the machine (nvidia-smi, nvcc, the commit gpu-check recorded). Each benchmark is
paired with its peer from the same run and reported with the ratio peer time / our time (> 1:
ours is faster). Written atomically."""
import glob
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

# Our benchmark -> its peer (same arguments, same run).
PEERS = {
    "BM_linear_forward": "BM_cublas_sgemm_forward",
    "BM_linear_backward": "BM_cublas_sgemm_backward",
    "BM_attention_forward": "BM_naive_attention_forward",
}


def command(*args):
    try:
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as error:
        return f"unavailable: {error}"


def is_bf16_on_cuda(name):
    """bf16_precision_tests' cuda instantiations: Bf16/Bf16Linear.<test>/cuda, Bf16/Bf16Model.<test>/cuda."""
    return name.startswith("Bf16/") and name.endswith("/cuda")


def tests(folder):
    """Every test case of the gtest XML files, named as ctest names them: Suite.Test/param."""
    summary = {"total": 0, "passed": 0, "failed": [], "skipped": [], "named_cuda": 0, "passed_names_bf16": [],
               "binaries": {}}
    for path in sorted(glob.glob(os.path.join(folder, "tests", "*.xml"))):
        binary = os.path.basename(path)[: -len(".xml")]
        counts = summary["binaries"].setdefault(binary, {"total": 0, "failed": 0, "skipped": 0})
        for case in ElementTree.parse(path).getroot().iter("testcase"):
            name = f"{case.get('classname')}.{case.get('name')}"
            summary["total"] += 1
            counts["total"] += 1
            if "cuda" in name.lower():
                summary["named_cuda"] += 1  # .../cuda instantiations, CudaDevice.*
            if case.find("failure") is not None or case.find("error") is not None:
                summary["failed"].append(name)
                counts["failed"] += 1
            elif case.get("result") == "skipped" or case.find("skipped") is not None or case.get("status") == "notrun":
                summary["skipped"].append(name)
                counts["skipped"] += 1
            else:
                summary["passed"] += 1
                if is_bf16_on_cuda(name):
                    summary["passed_names_bf16"].append(name)
    # A binary that crashed leaves no XML: its log is the evidence.
    for log in sorted(glob.glob(os.path.join(folder, "tests", "*.log"))):
        binary = os.path.basename(log)[: -len(".log")]
        if binary not in summary["binaries"]:
            summary["failed"].append(f"{binary}: no XML written (crashed or timed out; see tests/{binary}.log)")
    return summary


def benchmarks(folder):
    results = {}
    for file in sorted(os.listdir(folder)):
        if file.endswith("_bench.json"):
            with open(os.path.join(folder, file)) as f:
                for b in json.load(f)["benchmarks"]:
                    results[b["name"]] = b
    rows = []
    for name, b in results.items():
        base, _, args = name.partition("/")
        row = {"name": name, "real_time": b.get("real_time"), "time_unit": b.get("time_unit"),
               "error": b.get("error_message")}
        if "FLOP/s" in b:  # a rate counter: Google Benchmark writes it per second
            row["gflops"] = b["FLOP/s"] / 1e9
        peer = results.get(PEERS.get(base, "") + ("/" + args if args else ""))
        if peer and b.get("real_time") and peer.get("real_time"):
            row["peer"] = peer["name"]
            row["peer_over_ours"] = peer["real_time"] / b["real_time"]
        rows.append(row)
    return rows


def real_time_ms(benchmark):
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[benchmark["time_unit"]]
    return benchmark["real_time"] * scale


def pytorch_section(folder, rows):
    """Ours against PyTorch eager on the same device: attention against scaled_dot_product_attention
    (float32, and bf16 flash), the paper-base model against nn.Transformer; ratio = PyTorch's time /
    ours (> 1: ours is faster), with the issue's goals."""
    peer = load_json(os.path.join(folder, "cuda_torch_peer.json"))
    if "attention" not in peer:
        return peer
    ours = {row["name"]: row for row in rows if row.get("real_time") and not row.get("error")}
    pairs = []

    def pair(what, our_name, torch_ms, goal):
        row = ours.get(our_name)
        if row is None:
            return
        ms = real_time_ms(row)
        pairs.append({"what": what, "ours": our_name, "ours_ms": ms, "pytorch_ms": torch_ms,
                      "pytorch_over_ours": torch_ms / ms, "goal": goal, "met": torch_ms / ms >= goal})

    for a in peer["attention"]:
        t, kind = a["length"], f"sdpa {a['dtype']} {a['kernel']}"
        goal = 1 / 1.5 if a["kernel"] == "flash" else 1.0
        pair(f"attention forward T={t} vs {kind}", f"BM_attention_forward/{t}/{t}/real_time", a["forward_ms"], goal)
        pair(f"attention backward T={t} vs {kind}", f"BM_attention_backward/{t}/{t}/real_time", a["backward_ms"], goal)
    for m in peer["model"]:
        shape = f"batch:{m['batch']}/length:{m['length']}/bf16:{int(m['precision'] == 'bf16')}/real_time"
        what = f"paper-base {m['batch']}x{m['length']} {m['precision']} vs nn.Transformer"
        pair(f"{what} forward", f"BM_CudaModelForward/{shape}", m["forward_ms"], 1.0)
        pair(f"{what} training step", f"BM_CudaModelTrainStep/{shape}", m["train_step_ms"], 1.0)
    return {"torch": peer.get("torch"), "device": peer.get("device"), "pairs": pairs}


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        return {"unavailable": str(error)}


def bf16_section(folder, summary):
    """The bf16 precision: its conformance tests (bf16_precision_tests on cuda), the linear and model rows of
    compare-kernels on the device beside the host emulation, and the two training runs."""
    section = {"tests": {"failed": [n for n in summary["failed"] if is_bf16_on_cuda(n)],
                         "skipped": [n for n in summary["skipped"] if is_bf16_on_cuda(n)],
                         "passed": summary["passed_names_bf16"]}}
    accuracy = {}
    for precision in ("float32", "bf16"):
        report = load_json(os.path.join(folder, f"compare_kernels_{precision}.json"))
        if "ops" not in report:
            accuracy[precision] = report
            continue
        accuracy[precision] = {
            "linear": [row for row in report["ops"] if row["op"] == "linear"],
            "model": report.get("model"),
            "model_bf16_emulated": report.get("model_bf16_emulated"),
        }
    section["compare_kernels"] = accuracy
    training = {}
    for precision in ("float32", "bf16"):
        run = load_json(os.path.join(folder, f"train_{precision}", "report.json"))
        curve = run.get("curve", [])
        # final_loss: the curve's last point, the mean loss of the last window of steps.
        training[precision] = {"status": run.get("status", run.get("unavailable")),
                               "steps": curve[-1]["step"] if curve else 0,
                               "final_loss": curve[-1]["loss"] if curve else None,
                               "best": run.get("best")}
    section["training_copy_tiny"] = training
    return section


def main(folder, build):
    with open(os.path.join(folder, "commit")) as f:
        commit = f.read().splitlines()  # git rev-parse HEAD, then git status --porcelain
    report = {
        "commit": commit[0] if commit else "unknown",
        "uncommitted_changes": commit[1:],
        "devices": command("nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap", "--format=csv,noheader"),
        "nvcc": command("nvcc", "--version").splitlines()[-1:],
        "build": build,
        "cpu": command("sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
        "tests": tests(folder),
        "benchmarks": benchmarks(folder),
    }
    report["pytorch"] = pytorch_section(folder, report["benchmarks"])
    report["bf16"] = bf16_section(folder, report["tests"])
    del report["tests"]["passed_names_bf16"]
    path = os.path.join(folder, "report.json")
    with open(path + ".tmp", "w") as f:
        json.dump(report, f, indent=2)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
