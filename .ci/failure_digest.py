"""Print the failed Ansible tasks of a molecule/ansible-playbook log, for the end of a CI log.

CI keeps only the tail of its output, and a molecule failure's tail is the scenario recap, which
says *that* verify failed, never *which* task or why. Run after a failed stage, this prints each
failing task's header and its message (fatal/failed blocks, ANSI colour stripped) last, where the
CI tail shows it. Standard library only: it must work before, and without, the venv.

Usage: python3 failure_digest.py LOG [--width N] [--max-lines N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# molecule 25 frames every line of a playbook's output with a box-drawing gutter.
_GUTTER = re.compile(r"^\s*[│┌└├]\s?")
_TASK = re.compile(r"^TASK \[")
_FAIL = re.compile(r"^(fatal|failed): \[")
_BLOCK_END = re.compile(
    r"^(TASK|PLAY|RUNNING HANDLER) \[|^(ok|changed|skipping|included|fatal|failed): \[|^\.\.\.ignoring|^\[ERROR\]|^PLAY RECAP"
)
_RECAP_FAILED = re.compile(r"^\S+\s+: ok=.*failed=[1-9]")
# What says why a task failed; a shell task's result leads with its whole script (cmd), which fills
# a one-line digest before its output is reached.
_WHY = ("msg", "rc", "stderr", "stdout")
_TAIL = 600


def _clean(line: str) -> str:
    return _GUTTER.sub("", _ANSI.sub("", line.rstrip("\n")))


def failures(lines: list[str]) -> list[tuple[str, str, str]]:
    """Each failed task result as (play, task, message), the message's wrapped lines joined into one."""
    out: list[tuple[str, str, str]] = []
    play = task = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("PLAY ["):
            play = line
        elif _TASK.match(line):
            task = line
        if _FAIL.match(line):
            block = [line]
            j = i + 1
            while j < len(lines) and not _BLOCK_END.match(lines[j]):
                block.append(lines[j])
                j += 1
            if not (j < len(lines) and lines[j].startswith("...ignoring")):
                out.append((play, task, " ".join(part.strip() for part in block if part.strip())))
            i = j
            continue
        i += 1
    return out


def essence(message: str) -> str:
    """A failed result's message with only the fields that say why (msg, rc, stderr, stdout; the
    output's tail), when the result after '=> ' is JSON; otherwise the message as it is."""
    head, sep, body = message.partition(" => ")
    if not sep:
        return message
    try:
        result = json.loads(body)
    except ValueError:
        return message
    if not isinstance(result, dict):
        return message
    parts = []
    for key in _WHY:
        value = result.get(key)
        if value in (None, "", []):
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        if len(text) > _TAIL:
            text = "[...]" + text[-_TAIL:]
        parts.append(f"{key}: {text}")
    return f"{head} => " + ("; ".join(parts) if parts else body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--width", type=int, default=200)
    parser.add_argument("--max-lines", type=int, default=10, help="lines of the last failure's message")
    args = parser.parse_args(argv)
    try:
        with open(args.log, encoding="utf-8", errors="replace") as handle:
            lines = [_clean(line) for line in handle]
    except OSError as exc:
        print(f"failure_digest: cannot read {args.log}: {exc}", file=sys.stderr)
        return 1
    found = failures(lines)
    # The CI view is short: earlier failures (often handled on purpose by a rescue) one line each,
    # then the last one, which stopped the run, in full, then the recaps. All of it near the end.
    print(f"==== {len(found)} failed task result(s) in {args.log}")
    earlier = found[:-1]
    if len(earlier) > 5:
        print(f"  ({len(earlier) - 5} earlier failed results not shown)")
    for _play, task, message in earlier[-5:]:
        # Three lines each: the first failure is often the cause of the last (a host that failed early
        # leaves the others without its results).
        line = textwrap.shorten(f"earlier (may be rescued on purpose): {task} {essence(message)}", args.width * 3)
        print("\n".join("  " + part for part in textwrap.wrap(line, args.width - 2)))
    if found:
        play, task, message = found[-1]
        print(f"==== last failure: {play} / {task}")
        wrapped = textwrap.wrap(essence(message), args.width)
        print("\n".join(wrapped[: args.max_lines]))
        if len(wrapped) > args.max_lines:
            print(f"  [... {len(wrapped) - args.max_lines} more lines in the log]")
    else:
        print("(no fatal/failed task result: the failure is outside a task; see the log)")
    recaps = [line for line in lines if _RECAP_FAILED.match(line)]
    if recaps:
        print("==== recap lines with failed tasks: " + " | ".join(" ".join(r.split()) for r in recaps[-2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
