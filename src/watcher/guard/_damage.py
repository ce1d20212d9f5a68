"""The guard's rules for what cannot be had back: destructive deletes, writes to devices and
permission changes of system or home trees (fork and resource bombs are in ``_bombs``)."""

from __future__ import annotations

import os
import re
from fnmatch import fnmatchcase

from watcher.guard._bindings import MKTEMP_FOLDER
from watcher.guard._built import input_file
from watcher.guard._context import INTERPRETERS, At, inline_code, readable_code
from watcher.guard._files import Finding, config_inside, delete_loss, device, regular_text, secret_file, system_path
from watcher.guard._lazy import lazy
from watcher.guard._paths import Place, glob_parent, matches_any
from watcher.guard._shell import Command
from watcher.guard._simple import option_outputs

__all__ = ["deletes", "devices", "emptied_buckets", "permissions"]

_DELETERS = frozenset(
    {
        "rm",
        "grm",
        "shred",
        "gshred",
        "srm",
        "wipe",
        "unlink",
        "trash",
        "trash-put",
        "gio",
        "gtrash",
        "gvfs-trash",
        "rimraf",
    }
)
# deleters that take a folder whole without asking for -r: a folder sent to the trash leaves the
# project (or the home) broken as surely as one deleted, whatever the trash keeps
_WHOLE_DELETERS = frozenset({"rimraf", "trash", "trash-put", "gtrash", "gvfs-trash", "gio"})
# Windows' deleters (PowerShell's and cmd's); their switches are -Recurse or /s
_WINDOWS_DELETERS = frozenset({"remove-item", "ri", "del", "erase", "rd", "rmdir"})

_FILTERS = frozenset({"grep", "egrep", "fgrep", "sort", "uniq", "head", "tail", "tr", "cat", "sed"})
# PowerShell options whose value is no path (`-ErrorAction SilentlyContinue`, `-Include *.log`)
_PS_VALUED = frozenset(
    {"-include", "-exclude", "-filter", "-erroraction", "-ea", "-warningaction", "-wa", "-credential", "-stream"}
)
_LISTERS = frozenset({"get-childitem", "gci", "dir", "ls"})  # what feeds PowerShell's Remove-Item the items
_PERMS = frozenset({"chmod", "chown", "chgrp", "setfacl", "chattr", "chflags"})


def deletes(x: At) -> Finding | None:
    if not x.on("destructive-delete"):
        return None
    name, recursive = x.name, "r" in x.short.lower() or "--recursive" in x.args
    targets: list[str] = []
    if name.lower() in _WINDOWS_DELETERS and (name.lower() != "rmdir" or any(a.lower() == "/s" for a in x.args)):
        switches = [a for a in x.args if re.fullmatch(r"/[A-Za-z]|-\w+", a)]
        recursive = any(a.lower() in ("/s", "-recurse", "-r") for a in switches)
        paths = ("-path", "-literalpath")
        targets = [
            a
            for i, a in enumerate(x.args)
            if (a not in switches and not (i and x.args[i - 1].lower() in _PS_VALUED))
            or (i and x.args[i - 1].lower() in paths)
        ]
        targets = [t for t in targets if t.lower() not in paths]
        lister = x.cmd.feeder
        if not targets and recursive and lister is not None and lister.name.lower() in _LISTERS:
            # Get-ChildItem -Path $HOME | Remove-Item -Recurse: everything the listing names
            folder = next((a for a in lister.args if not a.startswith("-")), ".")
            targets = [folder.rstrip("/\\") + "/*"]
    elif name in _DELETERS and (name not in ("gio", "gtrash") or x.positional[:1] in (["trash"], ["remove"], ["put"])):
        recursive = recursive or name in _WHOLE_DELETERS
        targets = x.positional[1:] if name in ("gio", "gtrash") else x.positional
        if "--no-preserve-root" in x.args:
            return "destructive-delete", "deletes with --no-preserve-root: the filesystem root itself"
    elif name == "mv" and len(x.positional) >= 2:
        targets, recursive = x.positional[:-1], True  # the sources leave where they were
    elif (archived := _archived_away(x)) is not None:  # tar --remove-files, zip -m: the files packed go
        targets, recursive = archived, True
    elif name == "rsync" and any(a.startswith("--delete") for a in x.args) and x.positional:
        targets, recursive = x.positional[-1:], True
    elif name in INTERPRETERS and (code := inline_code(x.cmd)):
        code = readable_code(code)
        targets = re.findall(
            r"(?:rmtree|remove_tree|rmSync|Deno\.remove(?:Sync)?(?=\([^;\n]{0,200}recursive\s*:\s*true)|(?:fs|fsp|promises)\.rm|rm_rf|rm_r|rimraf(?:\.sync)?|removedirs|rmdirSync"
            r"|remove_dir_all|rmdir)\(\s*(?:(?:Dir\.glob|glob\.glob|glob)\(\s*)?[fFrRbB]{0,2}['\"`]([^'\"`]+)['\"`]",
            code,
        ) + re.findall(r"\bunlink\(\s*['\"]([^'\"]+)['\"][^)]{0,100}recursive\s*=\s*T", code)  # R
        recursive = bool(targets)
        if not targets:  # a single file: os.remove('/etc/passwd'), fs.unlinkSync, File.delete, perl's unlink
            targets = re.findall(
                r"(?:\bremove|\bunlink|unlinkSync|\bdelete|unlink_file)\s*\(?\s*(?:glob\s*\(\s*)?['\"]([^'\"]+)['\"]",
                code,
            )
    listed: list[str] = []
    for word in targets:
        if (ls := _LISTING.fullmatch(word)) is not None:  # rm -rf $(ls): every entry ls lists there
            word = (ls[1] or ls[2] or ".").rstrip("/") + "/*"
        if input_file(word) is not None:  # `find … | xargs rm`, `xargs -a list rm -rf`
            listed_in = input_file(word)
            word = "" if listed_in else _xargs_source(x.cmd)  # a list file, not what the pipe feeds
            if not word and listed_in and recursive:
                entries = _listed(x.path(listed_in))
                if entries is None:
                    return (
                        "destructive-delete",
                        f"deletes the paths listed in {listed_in}, which the guard cannot read: read the list, then delete what the task needs",
                    )
                listed += entries
            if not word:
                continue
        parent, whole = glob_parent(word)
        partial = not whole and parent != word  # *.tmp: the entries it names, not their folder
        # a whole folder's entries: inside it (`link/*` goes through a link the line makes, `link` alone not)
        path = x.path(word if partial else parent.rstrip("/") + "/" if whole else parent)
        inside = word.rstrip().endswith(("/", "/.", "/*"))  # rm -rf h/: what the link h points to goes
        loss = delete_loss(x.place, path, x.policy, recursive=recursive, whole=whole, inside=inside)
        if loss is None and partial and name not in ("mv", "rsync"):
            loss = _swept(x, word, parent)
        if loss is not None and (recursive or whole or not loss.startswith("a path built from a variable")):
            verb = "moves away" if name in ("mv", "rsync") else "deletes"
            return (
                "destructive-delete",
                f"{verb} {loss}: this cannot be undone; delete only what the task needs inside the project",
            )
    for word in listed:  # the entries of a list file xargs reads, as if written out
        loss = delete_loss(x.place, x.path(word), x.policy, recursive=recursive, whole=False)
        if loss is not None and recursive:
            return "destructive-delete", f"deletes {loss} (listed in its input): this cannot be undone"
    return None


# a listing of a folder's entries substituted into the line: $(ls), `ls -A dir`, $(ls -1 ~)
_LISTING = re.compile(r"\$\(\s*ls(?:\s+-\w+)*(?:\s+([^\s;|&()`]+))?\s*\)|`\s*ls(?:\s+-\w+)*(?:\s+([^\s;|&()`]+))?\s*`")


def _archived_away(x: At) -> list[str] | None:
    """The files an archiver deletes once it has packed them (``tar --remove-files``, ``zip -m``,
    ``7z a -sdel``, ``rsync --remove-source-files``); None for an archiver that keeps them."""
    args, positional = x.args, x.positional
    if x.name in ("tar", "bsdtar", "gtar") and "--remove-files" in args:
        archive = next((a[7:] for a in args if a.startswith("--file=")), None)
        for i, a in enumerate(args[:-1]):
            if a == "--file" or (a.startswith("-") and not a.startswith("--") and "f" in a) or (i == 0 and "f" in a):
                archive = args[i + 1]  # -czf NAME, or the old form: czf NAME
                break
        return [p for i, p in enumerate(positional) if p != archive and not (i == 0 and p == args[0])]
    if x.name == "zip" and ("m" in x.short or "--move" in args) and len(positional) > 1:
        return positional[1:]  # zip -rm out.zip dir: the archive, then what goes into it
    if x.name in ("7z", "7za", "7zz") and "-sdel" in args and len(positional) > 2:
        return positional[2:]  # 7z a out.7z dir -sdel
    if x.name == "rsync" and "--remove-source-files" in args and len(positional) > 1:
        return positional[:-1]
    return None


def _swept(x: At, word: str, parent: str) -> str | None:
    """Every file of a kind in a folder of the person's own outside the project (``rm
    ~/Documents/*.docx``; ``find ~ -name '*.ipynb' -delete``, the whole tree): their work, not the
    task's. Junk (``*.pyc``, ``.DS_Store``, ``*.log``) and caches or temporary folders are not."""
    folder = x.path(parent)
    pattern = word[len(parent) :].lstrip("/")
    rel = x.place.in_home(folder)
    if rel is None or _JUNK.fullmatch(pattern) or x.place.inside_project(folder) or folder == x.place.project:
        return None
    if any(rel == c or rel.startswith(c + "/") for c in _SCRATCH):
        return None
    made_again = x.policy.data["paths"]["regenerable"]  # a build's or cache's folder, anywhere on the way
    if any(fnmatchcase(part, g) for part in rel.split("/") for g in made_again):
        return None
    where = "~/" + rel if rel else "your home"
    tree = " and every folder under it" if "find" in x.cmd.wrapped_by else ""
    return f"every {pattern} file in {where}{tree}, outside the project (the person's own files)"


# what a sweep may delete anywhere: build leftovers, editor and OS litter, logs
_JUNK = re.compile(
    r"(?i)\*?\.(?:pyc|pyo|class|o|obj|log|tmp|temp|swp|swo|orig|rej|bak|crdownload|part)|\.DS_Store|Thumbs\.db|\*~|\.#\*"
    r"|__pycache__|\.ipynb_checkpoints|\*\.(?:pyc|log|tmp)\b.*"
)
# folders of the home whose files are scratch: caches and temporary files
_SCRATCH = (".cache", "Library/Caches", "tmp", ".tmp", "Library/Logs", ".npm", ".Trash")


def _listed(path: str) -> list[str] | None:
    """The paths a list file names, one per line (None: it cannot be read). Its first 64 kB only."""
    if path == "/dev/null":  # xargs rm -rf < /dev/null: nothing listed, nothing deleted
        return []
    try:
        return [line.strip() for line in regular_text(path).splitlines() if line.strip()][:2000]
    except OSError:
        return None


def _xargs_source(cmd: Command) -> str:
    if cmd.stdin:
        return cmd.stdin.split()[0] if cmd.stdin.split() else ""
    feeder = cmd.feeder
    while feeder is not None and feeder.name in _FILTERS and feeder.feeder is not None:
        # tail -n +2: all but the first line (find's start folder, ls -l's total); tail -n +6 keeps the newest five
        skips_first = feeder.name == "tail" and any(a in ("+1", "+2", "-n+1", "-n+2") for a in feeder.args)
        if (feeder.name in ("head", "tail") and not skips_first) or (
            feeder.name.endswith("grep") and not {"-v", "--invert-match"} & set(feeder.args)
        ):
            return ""  # ls | grep '.log$' | xargs rm: only what the filter picks, not known here
        feeder = feeder.feeder  # ls -A | grep -v '^src$' (or tail -n +2) | xargs rm -rf: what ls lists, less a few
    if feeder is None or feeder.name not in ("find", "ls", "echo", "printf"):
        return ""
    if feeder.name == "ls" and not [a for a in feeder.args if not a.startswith("-")]:
        return "./*"  # ls | xargs rm: everything here
    args = list(feeder.args)
    if feeder.name == "find":
        if any(a in ("-name", "-iname", "-path", "-regex", "-ipath") for a in args):
            return ""
        starts = [a for a in args if not a.startswith(("-", "(", "!"))][:1]
        return (starts[0] if starts else ".").rstrip("/") + "/*"
    return next((a for a in args if not a.startswith("-")), "")


def devices(x: At) -> Finding | None:
    if not x.on("device-write"):
        return None
    outs = [t for op, t in x.cmd.redirects if ">" in op]
    if x.name == "dd":
        outs += [a[3:] for a in x.args if a.startswith("of=")]
    if x.name in ("tee", "cp", "cat", "pv", "install"):
        outs += x.positional[-1:] if x.name != "tee" else x.positional
    outs += option_outputs(x.name, x.args)  # curl -o /dev/sda URL, tar -cf /dev/sda .
    for word in outs:
        path = x.path(word)
        if device(path):
            return "device-write", f"writes to the device {path}: the filesystem on it is destroyed"
    mkfs = x.name in ("mkfs", "mke2fs", "mkswap") or x.name.startswith("mkfs.")
    if mkfs and any(x.path(p).startswith("/dev/") for p in x.positional):
        return "device-write", "formats a disk: every file on it is lost"
    return None


def _opens(mode: str) -> bool:
    """``mode`` lets others write (``777``, ``666``, ``o+w``, ``a+w``, ``+w``): anyone may change the file."""
    if re.fullmatch(r"[0-7]{3,4}", mode):
        return int(mode[-1]) & 2 == 2
    return any(
        re.fullmatch(r"[ugoa]*[+=][rwxXst]*w[rwxXst]*", part) and not re.match(r"[ug]+[+=]", part)
        for part in mode.split(",")
    )


def _shows(mode: str) -> bool:
    """``mode`` lets other accounts read (``644``, ``o+r``, ``a+r``, ``+r``)."""
    if re.fullmatch(r"[0-7]{3,4}", mode):
        return bool(int(mode[-2]) & 4 or int(mode[-1]) & 4)
    return any(
        re.fullmatch(r"[ugoa]*[+=][rwxXst]*r[rwxXst]*", part) and not re.match(r"u+[+=]", part)
        for part in mode.split(",")
    )


def _closes(mode: str) -> bool:
    """``mode`` only takes rights from other accounts, the owner keeping read (``700``, ``600``,
    ``go-rwx``): the usual repair of a credential store's permissions."""
    if re.fullmatch(r"[0-7]{3,4}", mode):
        return int(mode[-3]) & 4 == 4 and mode[-2:] == "00"
    return all(re.fullmatch(r"[go]+-[rwxXst]+", part) for part in mode.split(","))


def _takes(mode: str, path: str) -> bool:
    """``mode`` takes the owner's read right away (``000``, ``a-r``), or a program's execute right
    (``chmod a-x /usr/bin/sudo``): what needs the file stops working."""
    program = os.path.basename(os.path.dirname(path)) in ("bin", "sbin", "libexec")
    if re.fullmatch(r"[0-7]{3,4}", mode):
        return int(mode[-3]) & 4 == 0 or (program and int(mode[-3]) & 1 == 0)
    lost = "rx" if program else "r"
    return any(re.fullmatch(rf"[ua]*-[rwxXst]*[{lost}][rwxXst]*", part) for part in mode.split(","))


def _disables_setting(x: At, mode: str, path: str) -> bool:
    """``chmod -x .claude/hooks/guard.sh``, ``chattr +i``/``chown`` of a setting of the agent's guard
    or start-up: the hook no longer runs, or the person can no longer change the setting."""
    config = x.policy.data["config"]["paths"]
    if not (matches_any(x.place, path, config) or config_inside(x.place, path, x.policy)):
        return False
    if x.name in ("chattr", "chflags"):  # locked or unlocked (not compression, not a Finder flag)
        return any(_LOCKS.fullmatch(m) for m in mode.split(","))
    if x.name != "chmod" or _opens(mode) or _takes(mode, path):
        return True
    hook = "/hooks" in path or "/.husky" in path  # a hook script without its execute right no longer runs
    if re.fullmatch(r"[0-7]{3,4}", mode):
        return hook and int(mode[-3]) & 1 == 0
    return any(re.fullmatch(r"[ua]*-[rwXst]*x[rwXst]*", part) for part in mode.split(","))


# a mode written as an option (`chmod -x f`, `chattr -i f`; chattr's own options are -R, -V, -f, -v, -p)
_OPTION_MODE = {"chmod": r"-[rwxXst]+", "chattr": r"-(?![RVfvp]+$)[aAcCdDeEFiIjmNPsStTuxR]+"}
# immutable and append-only: chattr's i and a, BSD's system and user flags
_LOCKS = re.compile(
    r"[-+=][a-zA-Z]*[ia][a-zA-Z]*|(?:no)?(?:[su]chg|[su]appnd|[su]immutable|[su]append|schange|uchange)"
)


def _acl_opens(x: At) -> str | None:
    """``setfacl -m o::rwx /etc/sudoers``, ``setfacl -m u:nobody:w /etc/passwd``: an ACL that lets
    another account write a system file."""
    args = list(x.args)
    specs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-m", "--modify", "-M")]
    specs += [a.split("=", 1)[1] for a in args if a.startswith("--modify=")]
    if not any(re.search(r"(?:^|,)(?:[ugom]\w*:)?[^:,]*:[rwxX-]*w", spec) for spec in specs):
        return None
    for word in x.positional:
        path = x.path(word)
        if word not in specs and system_path(x.place, path, x.policy.data["paths"]):
            return f"lets another account write the system file {path} (an ACL)"
    return None


def _locked(x: At, mode: str, targets: list[str]) -> str | None:
    """``chattr +i /etc/passwd``, ``chflags noschg /etc/hosts``: a system file locked against every
    change (updates and the administrator's own edits fail), or the lock an administrator set lifted."""
    if x.name not in ("chattr", "chflags") or not any(_LOCKS.fullmatch(m) for m in mode.split(",")):
        return None
    for word in targets:
        path = x.path(glob_parent(word)[0])
        if system_path(x.place, path, x.policy.data["paths"]):
            lifts = mode.startswith(("-", "no"))
            return (
                f"lifts the immutable or append-only flag of the system file {path}: the lock an administrator set on it"
                if lifts
                else f"makes the system file {path} immutable or append-only: updates and the system's own changes to it fail"
            )
    return None


def permissions(x: At) -> Finding | None:
    if x.name not in _PERMS or not (x.on("permissions") or x.on("config-tampering")):
        return None
    recursive = "R" in x.short or "--recursive" in x.args or (x.name == "chattr" and "R" in x.short)
    modes = [a for a in x.args if re.fullmatch(_OPTION_MODE.get(x.name, "(?!)"), a)]
    targets = x.positional if modes else x.positional[1:]  # chmod -x f: a mode that looks like an option
    mode = modes[0] if modes else x.positional[0] if x.positional else ""
    if x.on("permissions") and (locked := _locked(x, mode, targets)):
        return "permissions", locked
    if x.name == "setfacl" and x.on("permissions") and (granted := _acl_opens(x)):
        return "permissions", granted
    setuid = x.name == "chmod" and (
        any(re.fullmatch(r"[ugoa]*[+=][rwxXt]*s[rwxXst]*", part) for part in mode.split(","))
        or re.fullmatch(r"[2467][0-7]{3}", mode)
    )
    for word in targets:
        parent, whole = glob_parent(word)
        path = x.path(parent)
        if x.on("config-tampering") and _disables_setting(x, mode, path):
            return "config-tampering", f"changes the permissions of {word}, a setting of the agent's guard or start-up"
        if not x.on("permissions"):
            continue
        if setuid:
            return "permissions", f"sets the setuid/setgid bit on {path}: it would run with its owner's rights"
        if x.name == "chmod" and system_path(x.place, path, x.policy.data["paths"]):
            if _opens(mode):
                return "permissions", f"lets every account write to the system file {path}"
            if _takes(mode, path):
                return "permissions", f"takes rights away from the system file {path}: what needs it stops working"
        key = secret_file(x.place, path, x.policy) if x.name == "chmod" and not whole else None
        if key and _shows(mode):
            return "permissions", f"lets other accounts read {key}"
        loss = delete_loss(x.place, path, x.policy, recursive=True, whole=whole)
        if x.name == "chmod" and _closes(mode) and loss is not None and loss.startswith("credentials"):
            continue  # chmod -R go-rwx ~/.ssh: the store closed to others, as ssh wants it
        top = path == "/" or path == x.place.home or (path.count("/") == 1 and not x.place.holds_project(path))
        home_alone = path == x.place.home and not (recursive or whole) and x.name == "chmod"
        if home_alone and not (_opens(mode) or _takes(mode, path)):
            continue  # chmod 755 ~: the folder alone, its owner keeping every right and no stranger writing
        if (
            (recursive or whole or top)
            and loss is not None
            and "outside the project" not in loss
            and "project" not in loss
        ):
            return (
                "permissions",
                f"changes ownership or permissions of {loss}, recursively: the system or your account can stop working",
            )
        if recursive and path != x.place.project and x.place.holds_project(path):
            return "permissions", f"changes ownership or permissions of {loss}, recursively"
    return None


# boto3's bucket.objects.all().delete(), .object_versions.delete(), client.delete_bucket(…) (on a
# bucket: a variable or a call's value, not a Django model's `User.objects.all().delete()`)
_EMPTIES_BUCKET = lazy(
    r"(?:\)|(?<![\w.])[a-z_]\w*)\.(?:objects|object_versions)(?:\.all\(\))?\.delete\(\)|\bdelete_bucket\("
)


# a cloud SDK's call that deletes a whole thing: a namespace, cluster, stack or bucket, or every instance
_DESTROYS_INFRA = lazy(
    r"\b(?:delete_namespace|deleteNamespace|delete_cluster|deleteCluster|delete_stack|deleteStack)\s*\("
    r"|\bDelete(?:Bucket|Cluster|Stack|DBInstance|DBCluster)Command\b|\bterminate_instances\s*\("
    r"|\binstances\.(?:all\(\)|filter\([^)]*\))\.terminate\(\)"
)


def emptied_buckets(cmds: list[Command], place: Place) -> Finding | None:
    """A folder made empty in the line synced onto a bucket with deletion (``mkdir -p /tmp/e && aws s3
    sync /tmp/e s3://b --delete``, ``gsutil rsync -d``, ``rclone sync``): every object in it goes. Or
    inline code that empties a bucket (``bucket.objects.all().delete()``).
    Only when nothing that could fill the folder runs between (``mkdir dist && npm run build && aws
    s3 sync dist …`` uploads the build)."""
    made: dict[str, int] = {}  # an empty folder -> the command that made it
    for n, c in enumerate(cmds):
        if (code := inline_code(c)) and _EMPTIES_BUCKET.search(code):
            return (
                "infrastructure",
                "deletes every object (or every version) of a bucket from inline code: they are gone for good",
            )
        if code and _DESTROYS_INFRA.search(code):
            return "infrastructure", "deletes a namespace, cluster, stack, bucket or instances through a cloud SDK"
        words = [a for a in c.args if not a.startswith("-")]
        if c.name == "mkdir":
            made.update((place.resolve(a).rstrip("/"), n) for a in words)
        elif c.name == "mktemp" and any(re.fullmatch(r"-\w*d\w*|--directory", a) for a in c.args):
            made[MKTEMP_FOLDER] = n  # as the line's bindings name the folder it makes
        deleting = (
            (c.name == "aws" and words[:2] == ["s3", "sync"] and "--delete" in c.args)
            or (c.name == "gsutil" and "rsync" in words and any(re.fullmatch(r"-\w*d\w*", a) for a in c.args))
            or (c.name == "rclone" and words[:1] == ["sync"])
        )
        if not deleting:
            continue
        at = words.index("rsync") + 1 if c.name == "gsutil" else 2 if c.name == "aws" else 1
        since = made.get(place.resolve(words[at]).rstrip("/")) if at < len(words) else None
        if since is not None and all(b.name in _QUIET for b in cmds[since + 1 : n]):
            return "infrastructure", "syncs an empty folder onto a bucket with deletion: every object in it is deleted"
    return None


# commands that put nothing into a folder made just before them
_QUIET = frozenset({"mkdir", "mktemp", "echo", "printf", "ls", "true", ":", "cd", "export", "set", "sleep", "date"})
