#!/usr/bin/env python3
"""Markdown tables of one scripts/gpu-check report.json (reports/gpu/): the device, the cuda
test counts and failures, each CUDA benchmark against its peer in the same run, ours against
PyTorch eager on the same device with the goals, and the bf16 section.
  gpu_summary.py REPORT.json OUT.md      (written atomically)"""
import json
import os
import sys


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}g}"


def lines(report):
    t = report["tests"]
    out = ["# gpu-check", "",
           f"- device: {report['devices']}; host CPU: {report['cpu'].strip()}; {' '.join(report['nvcc'])}",
           f"- commit: {report['commit']}" + (" (with uncommitted changes)" if report["uncommitted_changes"] else ""),
           f"- cuda tests: {t['passed']} passed, {len(t['failed'])} failed, {len(t['skipped'])} skipped of {t['total']}",
           ""]
    if t["failed"]:
        out += ["Failed:", ""] + [f"- `{name}`" for name in t["failed"]] + [""]
    out += ["| binary | tests | failed | skipped |", "| --- | ---: | ---: | ---: |"]
    out += [f"| {b} | {c['total']} | {c['failed']} | {c['skipped']} |" for b, c in t["binaries"].items()]
    out += ["", "## Benchmarks against their peer in the same run (peer time / ours: > 1 is ours faster)", "",
            "| benchmark | ours | peer | peer / ours |", "| --- | ---: | --- | ---: |"]
    for row in report["benchmarks"]:
        if "peer" in row:
            out.append(f"| {row['name']} | {fmt(row['real_time'], 4)} {row['time_unit']} | {row['peer']} | "
                       f"{fmt(row['peer_over_ours'])} |")
    pytorch = report.get("pytorch", {})
    if "pairs" in pytorch:
        out += ["", f"## Against PyTorch {pytorch['torch']} eager on the same device (PyTorch time / ours)", "",
                "| what | ours ms | PyTorch ms | PyTorch / ours | goal | met |",
                "| --- | ---: | ---: | ---: | ---: | --- |"]
        for p in pytorch["pairs"]:
            out.append(f"| {p['what']} | {fmt(p['ours_ms'], 4)} | {fmt(p['pytorch_ms'], 4)} | "
                       f"{fmt(p['pytorch_over_ours'])} | >= {fmt(p['goal'])} | {'yes' if p['met'] else 'no'} |")
    else:
        out += ["", f"PyTorch peer: {pytorch}"]
    bf16 = report["bf16"]
    out += ["", "## bf16", "",
            f"- bf16_precision_tests on cuda: {len(bf16['tests']['passed'])} passed, "
            f"{len(bf16['tests']['failed'])} failed, {len(bf16['tests']['skipped'])} skipped"]
    for precision, run in bf16["training_copy_tiny"].items():
        out.append(f"- copy task trained with --backend cuda, {precision}: {run['status']}, {run['steps']} steps, "
                   f"final loss {fmt(run['final_loss'], 4)}")
    return out


def main(report_path, out_path):
    with open(report_path) as f:
        report = json.load(f)
    with open(out_path + ".tmp", "w") as f:
        f.write("\n".join(lines(report)) + "\n")
    os.replace(out_path + ".tmp", out_path)


if __name__ == "__main__":
    main(*sys.argv[1:3])
