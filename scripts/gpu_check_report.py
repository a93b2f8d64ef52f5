"""Assembles scripts/gpu-check's one JSON report from what it left in the run folder: ctest's
JUnit file, the Google Benchmark JSON files, the compare-kernels reports and training runs of
the two precisions, and the machine (nvidia-smi, nvcc, git). Each benchmark is paired with its
peer from the same run and reported with the ratio peer time / our time (> 1: ours is faster).
Written atomically."""
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


def tests(junit_path):
    root = ElementTree.parse(junit_path).getroot()
    cases = root.iter("testcase")
    summary = {"total": 0, "passed": 0, "failed": [], "skipped": [], "named_cuda": 0, "passed_names_bf16": []}
    for case in cases:
        name = case.get("name")
        summary["total"] += 1
        if "cuda" in name.lower():
            summary["named_cuda"] += 1  # .../cuda instantiations, CudaDevice.*
        if case.find("failure") is not None or case.find("error") is not None:
            summary["failed"].append(name)
        elif case.find("skipped") is not None or case.get("status") == "notrun":
            summary["skipped"].append(name)
        else:
            summary["passed"] += 1
            if is_bf16_on_cuda(name):
                summary["passed_names_bf16"].append(name)
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
        steps = run.get("steps", [])
        training[precision] = {"status": run.get("status", run.get("unavailable")),
                               "steps": len(steps),
                               "final_loss": steps[-1]["loss"] if steps else None,
                               "best": run.get("best")}
    section["training_copy_tiny"] = training
    return section


def main(folder, build):
    report = {
        "git_commit": command("git", "rev-parse", "HEAD"),
        "git_dirty": bool(command("git", "status", "--porcelain")),
        "devices": command("nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap", "--format=csv,noheader"),
        "nvcc": command("nvcc", "--version").splitlines()[-1:],
        "build": build,
        "tests": tests(os.path.join(folder, "ctest.xml")),
        "benchmarks": benchmarks(folder),
    }
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
