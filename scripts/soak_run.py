"""The kill/resume soak behind scripts/soak: one uninterrupted training run, then the same run
killed with SIGKILL again and again (at seeded random moments, some of them while a checkpoint is
being written) and restarted each time with the one command a scheduler would repeat
(`train CONFIG --out RUN --resume`). After every kill the run folder must hold no partial file and
every checkpoint must load; at the end every checkpoint, the vocabulary, the report and the
history must equal the uninterrupted run's (byte for byte; the report and history apart from
their wall-clock fields).
"""
import argparse
import hashlib
import json
import os
import random
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

# Fields that measure the machine, not the run: they differ between any two runs.
WALL_CLOCK_FIELDS = ("created", "timings", "peak_memory_bytes", "resumed", "seconds")


def train(trepro, config, run):
    return [trepro, "train", str(config), "--out", str(run), "--resume"]


def timed_run(command):
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def writing_into(pid, folder):
    """True while process `pid` holds a file in `folder` open for writing."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        for fd in fds.iterdir():
            target = os.readlink(fd)
            if not target.startswith(str(folder) + "/"):
                continue
            flags = int(Path(f"/proc/{pid}/fdinfo/{fd.name}").read_text().split("flags:")[1].split()[0], 8)
            if flags & os.O_ACCMODE != os.O_RDONLY:
                return True
    except (FileNotFoundError, ProcessLookupError, IndexError):
        pass  # the process or the descriptor went away while we looked
    return False


def session(command, mode, delay, writes, checkpoints):
    """Runs one session and kills it: after `delay` seconds, or (mode "checkpoint") during its
    `writes`-th checkpoint write. Returns True when the kill landed, False when the run ended first."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + delay
    writing = False
    while process.poll() is None:
        if mode == "checkpoint":
            was_writing, writing = writing, writing_into(process.pid, checkpoints)
            writes -= writing and not was_writing
            if writes == 0:
                break
        if mode == "moment" and time.monotonic() >= deadline:
            break
        time.sleep(0.0002 if mode == "checkpoint" else 0.001)
    if process.poll() is not None:
        if process.returncode != 0:
            sys.exit(f"soak: a session failed ({process.returncode}): {process.stderr.read().decode()}")
        return False
    process.send_signal(signal.SIGKILL)
    process.wait()
    return True


def check_safetensors(path):
    """The header is JSON and the tensors tile the data exactly."""
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    ends = sorted(v["data_offsets"] for k, v in header.items() if k != "__metadata__")
    position = 0
    for begin, end in ends:
        if begin != position:
            raise ValueError(f"{path}: a gap or overlap at byte {begin}")
        position = end
    if 8 + size + position != len(data):
        raise ValueError(f"{path}: {len(data)} bytes, the header describes {8 + size + position}")


def check_folder(trepro, run, sentence, whole_temporaries):
    """No partial file; every JSON file parses; every checkpoint is whole and loads. A temporary
    is allowed only whole (a kill between naming it and renaming it; the next session removes it)
    and is counted in `whole_temporaries`."""
    for path in run.rglob("*.tmp.*"):
        try:
            check_safetensors(path) if ".safetensors." in path.name else json.loads(path.read_text())
        except (ValueError, struct.error) as e:
            raise ValueError(f"partial file left: {path} ({e})")
        whole_temporaries.append(path.name)
    for name in ("config.json", "report.json"):
        if (run / name).exists():
            json.loads((run / name).read_text())
    if (run / "history.jsonl").exists():
        for line in (run / "history.jsonl").read_text().splitlines():
            json.loads(line)
    checkpoints = sorted((run / "checkpoints").glob("*.safetensors")) if (run / "checkpoints").exists() else []
    for path in checkpoints:
        check_safetensors(path)
        subprocess.run([trepro, "translate", str(run), "--checkpoint", str(path), "--greedy", "--input", str(sentence)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return len(checkpoints)


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def without_wall_clock(report):
    for field in WALL_CLOCK_FIELDS:
        report.pop(field, None)
    for point in report.get("curve", []):
        point.pop("seconds", None)
    return report


def differences(whole, killed):
    found = []
    files = sorted(p.relative_to(whole) for p in (whole / "checkpoints").glob("*.safetensors"))
    files.append(Path("vocab.model"))
    for name in files:
        if not (killed / name).exists() or sha256(whole / name) != sha256(killed / name):
            found.append(str(name))
    report = [without_wall_clock(json.loads((run / "report.json").read_text())) for run in (whole, killed)]
    if report[0] != report[1]:
        found.append("report.json")
    history = [[without_wall_clock(json.loads(line)) for line in (run / "history.jsonl").read_text().splitlines()]
               for run in (whole, killed)]
    if history[0] != history[1]:
        found.append("history.jsonl")
    return found, len(files)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trepro", required=True)
    parser.add_argument("--config", required=True, type=Path, help="the fixture's config; epochs and intervals are set here")
    parser.add_argument("--scratch", required=True, type=Path)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    o = parser.parse_args()
    start = time.monotonic()

    config = json.loads(o.config.read_text())
    # Dropout on and update_freq > 1, as the issue asks; frequent checkpoints so kills meet them.
    assert config["model"]["dropout"] > 0 and config["train"]["update_freq"] > 1
    config["data"]["epochs"] = 60
    config["train"].update({"checkpoint_every": 3, "validate_every": 6})
    soak_config = o.scratch / "soak.json"
    soak_config.write_text(json.dumps(config))
    sentence = o.scratch / "sentence.txt"
    sentence.write_text("ein hund nummer 3 läuft 3 mal\n")

    whole, killed = o.scratch / "whole", o.scratch / "killed"
    whole_seconds = timed_run(train(o.trepro, soak_config, whole))
    rng = random.Random(o.seed)
    kills = {"moment": 0, "checkpoint": 0}
    sessions = checked = 0
    # Each session lives for a random share of the whole run (startup included), so that the
    # kills spread over it and leave it unfinished.
    longest = 4.0 * whole_seconds / o.kills
    reached, whole_temporaries = [], []
    while sum(kills.values()) < o.kills:
        mode = "checkpoint" if rng.random() < 0.3 else "moment"
        delay, writes = rng.uniform(0.0, longest), rng.randint(1, 6)
        sessions += 1
        if not session(train(o.trepro, soak_config, killed), mode, delay, writes, killed / "checkpoints"):
            sys.exit(f"soak: the run finished after {sum(kills.values())} kills; it needs more epochs")
        kills[mode] += 1
        checked += check_folder(o.trepro, killed, sentence, whole_temporaries)
        steps = [int(p.stem.split("_")[1]) for p in (killed / "checkpoints").glob("step_*.safetensors")]
        reached.append(max(steps, default=0))
    resumed_seconds = timed_run(train(o.trepro, soak_config, killed))
    left = []
    check_folder(o.trepro, killed, sentence, left)
    if left:
        raise ValueError(f"temporaries left at the end: {left}")

    found, compared = differences(whole, killed)
    summary = {
        "kills": sum(kills.values()),
        "kills_at_random_moments": kills["moment"],
        "kills_while_writing_a_checkpoint": kills["checkpoint"],
        "resumes": sessions,
        "checkpoint_loads_checked": checked,
        "newest_checkpoint_after_each_kill": reached,
        "whole_temporaries_left_by_a_kill": len(whole_temporaries),
        "steps": json.loads((whole / "report.json").read_text())["curve"][-1]["step"],
        "files_compared": compared + 2,
        "identical": not found,
        "differing": found,
        "uninterrupted_seconds": round(whole_seconds, 1),
        "last_session_seconds": round(resumed_seconds, 1),
        "soak_seconds": round(time.monotonic() - start, 1),
        "seed": o.seed,
    }
    print(json.dumps(summary, indent=1))
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    try:
        main()
    except (ValueError, subprocess.CalledProcessError) as e:
        sys.exit(f"soak: FAIL: {e}")
