#!/usr/bin/python3
"""fake_ssh.py HOST WORDS... (linked as `ssh`: the command provider takes a wrap whose first word is ssh
for a remote shell) — a fake ssh for the command provider's remote-shell wrap (tests/control/
command_shell.sh, bench/fault-soak/own.py --cloud): what ssh does with a command, on this machine.
The words are joined with blanks and run by `sh -c` in a session of their own, so a signal to this
client ends only the client and not the command (as with ssh: no terminal, the remote goes on).
This client waits for it and exits with its status (255, ssh's own, when the session was killed).
With FAKE_CLOUD set, the session is registered as $FAKE_CLOUD/sessions/HOST/SID while it runs, so
the fake cloud kills what runs "on" a node it takes away (fakecloud.py: ip_per_node)."""
import os
import sys

host, words = sys.argv[1], sys.argv[2:]
if host == "--":
    host, words = words[0], words[1:]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(w)
    os.setsid()
    os.read(r, 1)  # registered first: a node taken away at once still finds this session
    os.close(r)
    os.execv("/bin/sh", ["sh", "-c", " ".join(words)])
os.close(r)
reg = None
if os.environ.get("FAKE_CLOUD"):
    d = os.path.join(os.environ["FAKE_CLOUD"], "sessions", host)
    os.makedirs(d, exist_ok=True)
    reg = os.path.join(d, str(pid))
    open(reg, "w").close()
os.write(w, b"x")
os.close(w)
_, st = os.waitpid(pid, 0)
if reg:
    try:
        os.unlink(reg)
    except OSError:
        pass
sys.exit(255 if os.WIFSIGNALED(st) else os.WEXITSTATUS(st))
