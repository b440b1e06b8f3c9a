"""Faults of the machine in words: one sentence for each thing the machine (not the user's input) can
do to a run, the same on the command line, in the window's failed run, in the window's worker
process and in a study's Dask worker.

A fault of the machine is no C compiler, a folder of ours that cannot hold files, no display, no
memory, no room on the disk, or a process killed under a run. Each sentence says what happened,
what it stopped and what moves it (the package to install, the setting or environment variable
that moves a folder). Front ends show the sentence alone, exit 1 (the user's input is exit 2), and
keep the traceback for the log only: `describe(exc)` finds the fault in an exception (or the
exceptions it was raised from), `MachineFault` carries one across code that wraps errors (a search
worker's pipe, a compiled library's own error type).
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

EXIT_INPUT = 2          # the user's input: the message names the field
EXIT_MACHINE = 1        # the machine: no compiler, folder, display, memory or room

# What a C compiler is for here, in the user's words (core.ccompiler builds them).
COMPILER_USERS = ("Cain needs one for its code search and exact prover; MERIT times its generated C "
                  "and Cappuccino its synthesised programs only with one")
# Qt's X11 platform plugin needs these on minimal Debian and Ubuntu systems (the Makefile's
# QT_X11_DEBS installs the same).
QT_X11_DEBS = ("libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxcb-image0", "libxcb-render-util0",
               "libxkbcommon-x11-0")
# Qt platforms that draw without a display server of ours to check.
_NO_SERVER_PLATFORMS = ("offscreen", "minimal", "vnc", "linuxfb", "eglfs", "minimalegl", "vkkhrdisplay")
_SYSTEM_BIN = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"     # where package managers live, whatever PATH says
_NO_ROOM = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
_CANNOT_WRITE = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST, errno.EISDIR)


class MachineFault(RuntimeError):
    """A fault of the machine, already in words: `str(exc)` is the whole sentence for the user."""


class NoCompiler(MachineFault):
    """No C compiler on PATH."""


def mib(n: float) -> str:
    """A size in the unit people read: 553 MB, 1.4 GB."""
    return f"{n / 2 ** 30:.1f} GB" if n >= 2 ** 30 else f"{n / 2 ** 20:.0f} MB"


# ====================================================================== the sentences
def _install_compiler() -> str:
    if sys.platform == "darwin":
        return "`xcode-select --install`"
    for tool, command in (("apt-get", "apt-get install gcc"), ("dnf", "dnf install gcc"), ("yum", "yum install gcc"),
                          ("apk", "apk add gcc musl-dev"), ("pacman", "pacman -S gcc"), ("zypper", "zypper install gcc")):
        if shutil.which(tool, path=f"{os.environ.get('PATH', '')}{os.pathsep}{_SYSTEM_BIN}"):
            return f"`{command}`"
    return "gcc or clang from your system's packages"


def compiler_hint() -> str:
    """How to get a C compiler on this system."""
    return f"install one ({_install_compiler()}) or set CC to a compiler's full path"


def no_compiler(building: str) -> str:
    """No C compiler: which one was looked for, who needs it, how to get one."""
    return (f"no C compiler on PATH to build {building} (looked for $CC, gcc, cc, clang): {COMPILER_USERS}; "
            f"{compiler_hint()}")


def folder_setting(path: Path) -> str:
    """What moves the folder holding `path`: the environment variable of the app's folder it is in."""
    from core import paths

    folders = ((paths.BUILD, "DATAFLOW_EXPLORER_BUILD"), (paths.cache_dir(), "DATAFLOW_EXPLORER_CACHE"),
               (Path(tempfile.gettempdir()), "TMPDIR"))
    p = Path(os.path.abspath(path))
    for folder, variable in folders:
        f = Path(os.path.abspath(folder))
        if p == f or f in p.parents:
            return f"set {variable} to a folder that can (now {f})"
    return "choose a folder that can"


def _os_reason(folder: Path, exc: OSError) -> str:
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        blocking = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        return f"{blocking} is a file, not a folder" if blocking else "a file is in the way of a folder on its path"
    return (exc.strerror or str(exc)).lower()


def unwritable(folder: str | Path, exc: OSError | None = None, what: str = "") -> str:
    """A folder that cannot hold files: which one, why, and what moves it."""
    why = f" ({_os_reason(Path(folder), exc)})" if exc is not None else ""
    for_what = f" for {what}" if what else ""
    return f"the folder {folder} cannot hold files{for_what}{why}: {folder_setting(Path(folder))}"


def folder_fault(folder: str | Path, exc: OSError, what: str = "") -> str:
    """Writing into `folder` failed with `exc`: no room, or a folder that cannot hold files."""
    return no_room(folder) if exc.errno in _NO_ROOM else unwritable(folder, exc, what)


def no_room(path: str | Path | None) -> str:
    where = f" holding {path}" if path else ""
    return (f"no room left on the disk{where} (disk full or over quota): free some space, or "
            f"{folder_setting(Path(path)) if path else 'write elsewhere'}")


def out_of_memory(doing: str = "", needed: float | None = None, smaller: str = "problem") -> str:
    """Memory exhausted: what was being built and roughly how much more it needed."""
    what = f" while {doing}" if doing else ""
    need = f" (that needs about {mib(needed)} more)" if needed else ""
    limit = memory_limit()
    cap = f"; this process may use at most {mib(limit)} in all (ulimit -v)" if limit else ""
    return (f"ran out of memory{what}{need}{cap}: close other programs, raise the memory limit, or choose a "
            f"smaller {smaller}")


def exit_description(returncode: int) -> str:
    """How a process ended, in words: 'signal SIGSEGV (Segmentation fault)' or 'exit code 3'."""
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode)
        except ValueError:
            return f"signal {-returncode}"
        text = signal.strsignal(sig)
        return f"signal {sig.name}" + (f" ({text})" if text else "")
    return f"exit code {returncode}"


_CAUSES = {signal.SIGKILL: "most often the system killed it when memory ran out (the out-of-memory killer), or "
                           "another program ended it",
           signal.SIGSEGV: "a crash in compiled code", signal.SIGBUS: "a crash in compiled code (or a file it "
                                                                      "mapped shrank)",
           signal.SIGABRT: "it aborted (a failed check in a library, or no memory left)",
           signal.SIGTERM: "another program (or the system shutting down) asked it to stop"}


_SIGNALS = {int(s) for s in signal.Signals}


def killed(process: str, returncode: int) -> str:
    """A process that ended under a run without a result: how it ended, its usual cause, and that
    what it sent before is kept."""
    cause = _CAUSES.get(signal.Signals(-returncode), "") if -returncode in _SIGNALS else ""
    return (f"{process} ended with {exit_description(returncode)}{f': {cause}' if cause else ''}; what the run "
            f"sent before it ended is kept")


def killed_worker(attempts: int) -> str:
    """A study point whose Dask worker died under it every time it ran."""
    return (f"the Dask worker running this point died {attempts} time(s) (killed, or out of memory); the point "
            f"was not finished, and `study run --resume` runs it again")


# ====================================================================== finding a fault in an exception
def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in out and len(out) < 8:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def describe(exc: BaseException, doing: str = "") -> str | None:
    """The sentence for a fault of the machine in `exc` (or what it was raised from), None for any
    other error. `doing` says what was being built, for a MemoryError."""
    for e in _chain(exc):
        if isinstance(e, MachineFault):
            return str(e)
        if isinstance(e, MemoryError):
            return out_of_memory(doing or str(e))
        if isinstance(e, OSError) and e.errno in _NO_ROOM:
            return no_room(e.filename)
        if isinstance(e, OSError) and e.errno == errno.EFBIG:
            return (f"the file{f' {e.filename}' if e.filename else ''} reached the largest file this process may "
                    f"write (ulimit -f): raise the limit, or write less")
        if isinstance(e, OSError) and e.errno in _CANNOT_WRITE and e.filename and _ours(Path(str(e.filename))):
            return unwritable(Path(str(e.filename)).parent, e)
    return None


def _ours(path: Path) -> bool:
    """A path inside a folder of the app's own (build, cache): a failure there is the machine's,
    while a path the user typed (under /tmp too) is the user's input."""
    from core import paths

    p = Path(os.path.abspath(path))
    return any(p == f or f in p.parents for f in (Path(os.path.abspath(paths.BUILD)),
                                                  Path(os.path.abspath(paths.cache_dir()))))


# ====================================================================== probes
def memory_limit() -> int | None:
    """This process's address-space limit (ulimit -v) in bytes, None when unlimited."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY else int(soft)


def memory_headroom() -> int | None:
    """Roughly how many more bytes this process can allocate: the smaller of what its address-space
    limit leaves and the machine's available memory; None where neither can be read."""
    room: list[int] = []
    limit = memory_limit()
    if limit is not None:
        try:
            with open("/proc/self/status", encoding="ascii") as f:
                vm = next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:")), None)
            if vm is not None:
                room.append(max(0, limit - vm))
        except (OSError, ValueError):
            pass
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            avail = next((int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")), None)
        if avail is not None:
            room.append(avail)
    except (OSError, ValueError):
        pass
    return min(room) if room else None


def writable_folder(folder: str | Path, what: str = "") -> Path:
    """Make `folder` (and its parents) if needed and prove it can hold a file by writing one;
    MachineFault naming the folder and what moves it otherwise. For the app's own folders (build,
    cache), where a failure is the machine's, not the user's input."""
    p = Path(folder)
    try:
        p.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=p)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise MachineFault(folder_fault(p, exc, what)) from exc
    return p


def display_problem(environ: dict[str, str] | None = None, platform: str | None = None) -> str | None:
    """Why the window cannot open here, checked before Qt is asked (Qt aborts the process): on Linux
    and other X11 systems, no display server named (DISPLAY, WAYLAND_DISPLAY) for the platform Qt
    would use, or the X11 plugin's system libraries missing. None when the window can open (or Qt was
    told to draw offscreen)."""
    env = os.environ if environ is None else environ
    plat = sys.platform if platform is None else platform
    if plat.startswith(("win", "darwin", "cygwin")):
        return None
    qpa = env.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if qpa in _NO_SERVER_PLATFORMS or (qpa.startswith("wayland") and env.get("WAYLAND_DISPLAY")):
        return None
    if qpa in ("", "xcb") and env.get("DISPLAY"):
        if not x_server_listens(env["DISPLAY"]):
            return (f"no X server listens at DISPLAY={env['DISPLAY']} (a display left over from another session, or "
                    f"an ssh login without -X): start it in a desktop session or over `ssh -X`, or {_other_ways()}")
        missing = missing_x11_libraries()
        if missing:
            return (f"Qt's X11 plugin cannot load: the system libraries {', '.join(missing)} are missing; install "
                    f"them (Debian/Ubuntu: `apt-get install {' '.join(QT_X11_DEBS)}`), or {_other_ways()}")
        return None
    if not qpa and env.get("WAYLAND_DISPLAY"):
        return None
    named = ("neither DISPLAY nor WAYLAND_DISPLAY is set" if not qpa else
             f"QT_QPA_PLATFORM is {qpa!r} and {'DISPLAY' if qpa == 'xcb' else 'WAYLAND_DISPLAY'} is not set")
    return f"no display to open the window on ({named}): start it in a desktop session or over `ssh -X`, or {_other_ways()}"


def x_server_listens(display: str, proc_net_unix: str = "/proc/net/unix", socket_dir: str = "/tmp/.X11-unix") -> bool:
    """Whether a local X server listens at `display` (":0", ":1.0", "unix:0"): its socket file, or
    its abstract socket (Linux). True for a remote display ("host:0") or when it cannot be told."""
    host, _, rest = display.rpartition(":")
    number = rest.split(".")[0]
    if host not in ("", "unix") or not number.isdigit():
        return True
    if os.path.exists(f"{socket_dir}/X{number}"):
        return True
    try:
        with open(proc_net_unix, encoding="ascii", errors="replace") as f:
            table = f.read()
    except OSError:
        return True
    return f"@{socket_dir}/X{number}" in table


def _other_ways() -> str:
    return ("render the window to a file with `--screenshot FILE.png`, or use a subcommand without a window "
            "(`--help` lists them: cain, merit, cappuccino, study run, ...)")


def missing_x11_libraries() -> list[str]:
    """The shared libraries Qt's X11 plugin (libqxcb.so) needs and the system lacks, by `ldd` (as the
    Makefile checks); empty when all are there or it cannot be told."""
    import importlib.util
    import subprocess

    spec = importlib.util.find_spec("PySide6")      # found, not imported: core never loads Qt
    if spec is None or not spec.submodule_search_locations:
        return []
    plugin = Path(list(spec.submodule_search_locations)[0]) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    ldd = shutil.which("ldd")
    if not plugin.is_file() or ldd is None:
        return []
    try:
        out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.split()[0] for line in out.splitlines() if "not found" in line]
