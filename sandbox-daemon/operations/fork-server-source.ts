/**
 * The Python source of the fork server (see fork-server.ts for why it exists).
 * It starts commands with posix_spawn (setsid, signals reset to default,
 * stdio on pipes), or fork + exec on a Python without it.
 * Kept as a string so the daemon stays one bundled file; run with
 * `python3 -I -S -c <source>`. It must not contain a backtick or a dollar
 * followed by a brace (this is a template literal).
 *
 * Protocol, stdin (daemon → server): frames of a 4-byte big-endian length and
 * a JSON object, either
 *   {"id": n, "argv": [...], "cwd": "...", "env": {...}, "cap": bytes, "input": "..."|null}
 *   {"id": n, "drop": true}            close the job's pipes (output no longer wanted)
 * stdout (server → daemon): frames ">BII" (type, id, payload length) + payload:
 *   0 ready · 1 pid (u32) · 2 stdout bytes · 3 stderr bytes · 4 stdout end ·
 *   5 stderr end · 6 exit (i32 code or -1, i32 signal) · 7 spawn error (utf-8)
 */
export const FORK_SERVER_SOURCE = String.raw`
import errno, json, os, selectors, signal, struct, sys

READY, PID, OUT, ERR, OUT_END, ERR_END, EXIT, FAIL = range(8)
out_fd = 1

def send(kind, job_id, payload=b''):
    data = struct.pack('>BII', kind, job_id, len(payload)) + payload
    view = memoryview(data)
    while view:
        try:
            n = os.write(out_fd, view)
        except InterruptedError:
            continue
        view = view[n:]

def reset_child_signals():
    # Python ignores SIGPIPE and SIGXFSZ; ignored signals survive exec, so undo that.
    for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])

# posix_spawn (vfork underneath) does not copy this process's page tables: on small VMs
# that is most of the cost of starting a command. fork() remains for Pythons without it.
HAS_SPAWN = hasattr(os, 'posix_spawn') and hasattr(os, 'POSIX_SPAWN_DUP2')
DEFAULT_SIGNALS = set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}

def spawn(req, in_r, out_w, err_w):
    # The child inherits the working folder at spawn time; this process is single-threaded.
    os.chdir(req['cwd'])
    try:
        return os.posix_spawn(
            req['argv'][0], req['argv'], req['env'],
            file_actions=[
                (os.POSIX_SPAWN_DUP2, in_r, 0),
                (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2),
            ],
            setsid=True, setsigdef=DEFAULT_SIGNALS, setsigmask=[],
        )
    finally:
        os.chdir('/')

class Job:
    def __init__(self, job_id, cap):
        self.id = job_id
        self.cap = cap
        self.pid = None
        self.fds = {}
        self.sent = {OUT: 0, ERR: 0}
        self.pending = b''
        self.exited = False

sel = selectors.DefaultSelector()
jobs = {}
by_pid = {}

def close_fd(fd):
    info = None
    for job in jobs.values():
        if fd in job.fds:
            info = job.fds.pop(fd)
            break
    try:
        sel.unregister(fd)
    except (KeyError, ValueError):
        pass
    try:
        os.close(fd)
    except OSError:
        pass
    return info

def maybe_finish(job):
    if job.exited and not job.fds:
        jobs.pop(job.id, None)

def start(req):
    job = Job(req['id'], int(req['cap']))
    data = req.get('input')
    pipes = []
    try:
        out_r, out_w = os.pipe()
        pipes += [out_r, out_w]
        err_r, err_w = os.pipe()
        pipes += [err_r, err_w]
        if data is not None:
            in_r, in_w = os.pipe()
            pipes += [in_r, in_w]
        else:
            in_r = os.open(os.devnull, os.O_RDONLY)
            pipes.append(in_r)
            in_w = None
        pid = spawn(req, in_r, out_w, err_w) if HAS_SPAWN else os.fork()
    except OSError as e:
        for fd in pipes:
            os.close(fd)
        send(FAIL, job.id, str(e).encode())
        return
    if pid == 0:
        try:
            os.setsid()
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.chdir(req['cwd'])
            reset_child_signals()
            os.execve(req['argv'][0], req['argv'], req['env'])
        except BaseException as e:
            try:
                os.write(2, ('cannot run %s: %s\n' % (req['argv'][0], e)).encode())
            finally:
                os._exit(127)
    os.close(out_w)
    os.close(err_w)
    os.close(in_r)
    job.pid = pid
    jobs[job.id] = job
    by_pid[pid] = job
    send(PID, job.id, struct.pack('>I', pid))
    for fd, kind in ((out_r, OUT), (err_r, ERR)):
        os.set_blocking(fd, False)
        job.fds[fd] = kind
        sel.register(fd, selectors.EVENT_READ, ('out', job))
    if in_w is not None:
        job.pending = data.encode('utf-8', 'surrogateescape')
        os.set_blocking(in_w, False)
        job.fds[in_w] = 'in'
        sel.register(in_w, selectors.EVENT_WRITE, ('in', job))

def on_output(fd, job):
    kind = job.fds.get(fd)
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return
    except OSError:
        chunk = b''
    if not chunk:
        close_fd(fd)
        send(OUT_END if kind == OUT else ERR_END, job.id)
        maybe_finish(job)
        return
    # Forward one byte past the cap so the daemon sees the truncation; drain the rest.
    room = job.cap + 1 - job.sent[kind]
    if room > 0:
        part = chunk[:room]
        job.sent[kind] += len(part)
        send(kind, job.id, part)

def on_input(fd, job):
    try:
        n = os.write(fd, job.pending[:65536])
        job.pending = job.pending[n:]
    except BlockingIOError:
        return
    except OSError:
        job.pending = b''
    if not job.pending:
        close_fd(fd)
        maybe_finish(job)

def reap():
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return
        job = by_pid.pop(pid, None)
        if job is None:
            continue
        if os.WIFSIGNALED(status):
            payload = struct.pack('>ii', -1, os.WTERMSIG(status))
        else:
            payload = struct.pack('>ii', os.WEXITSTATUS(status), 0)
        job.exited = True
        send(EXIT, job.id, payload)
        maybe_finish(job)

def drop(job_id):
    job = jobs.get(job_id)
    if job is None:
        return
    for fd in list(job.fds):
        close_fd(fd)
    maybe_finish(job)

def main():
    inbox = 0
    os.set_blocking(inbox, False)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel.register(inbox, selectors.EVENT_READ, ('inbox', None))
    sel.register(wake_r, selectors.EVENT_READ, ('wake', None))
    buf = b''
    send(READY, 0)
    while True:
        try:
            events = sel.select()
        except InterruptedError:
            continue
        for key, _ in events:
            what, job = key.data
            if what == 'out':
                on_output(key.fd, job)
            elif what == 'in':
                on_input(key.fd, job)
            elif what == 'wake':
                try:
                    while os.read(wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
                reap()
            else:
                try:
                    chunk = os.read(inbox, 1 << 20)
                except BlockingIOError:
                    continue
                if not chunk:
                    return  # the daemon is gone
                buf += chunk
                while len(buf) >= 4:
                    size = struct.unpack('>I', buf[:4])[0]
                    if len(buf) < 4 + size:
                        break
                    req = json.loads(buf[4:4 + size].decode('utf-8', 'surrogateescape'))
                    buf = buf[4 + size:]
                    if req.get('drop'):
                        drop(req['id'])
                    else:
                        start(req)
        reap()

main()
`;
