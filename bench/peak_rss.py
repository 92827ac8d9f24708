"""Run ``python -m MODULE ARGS...`` (or ``-c CODE``) and report this process's peak resident memory.

The last line on stderr is ``peak_rss_bytes N``, the kernel's VmHWM of this process. Unlike a
parent's ``ru_maxrss`` of its children, it does not count the parent's pages that a child holds
between fork and exec. Used by ``bench_memory.py``.
"""

from __future__ import annotations

import runpy
import sys


def peak_rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> int:
    kind, target, *rest = sys.argv[1:]
    code = 0
    try:
        if kind == "-m":
            sys.argv = [target, *rest]
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            exec(compile(target, "<peak_rss>", "exec"), {"__name__": "__main__"})
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    sys.stdout.flush()
    print(f"peak_rss_bytes {peak_rss_bytes()}", file=sys.stderr, flush=True)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
