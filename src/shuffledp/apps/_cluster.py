"""Where a sweep's points run: here, on local worker processes (joblib), on a Dask cluster
(``dask.distributed``) or on a Ray cluster (docs/scale.md).

Every backend maps a pure function over the points and yields the answers **in input
order**, with a bounded number of points submitted and not yet yielded: memory stays flat
in the number of points, the rows can be written as they come, and the output does not
depend on the backend or on how many workers it has. Nothing here is imported by
``import shuffledp``; joblib, distributed and ray are imported only when asked for (extras
``sweep`` and ``cluster``).
"""

from __future__ import annotations

import collections
import contextlib
import os

__all__ = ["BACKENDS", "JOBLIB_BACKENDS", "open_backend", "Backend"]

#: joblib's process and thread pools on this machine (extra ``sweep``).
JOBLIB_BACKENDS = ("loky", "multiprocessing", "threading")
BACKENDS = ("sequential",) + JOBLIB_BACKENDS + ("dask", "ray")

_INSTALL = {"joblib": "sweep", "distributed": "cluster", "ray": "cluster"}


def _need(module: str, what: str):
    """Import an optional package or say which extra installs it (an ImportError)."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise ImportError(f"{what} needs the package {top!r}, which is not installed: "
                          f"pip install 'shuffledp[{_INSTALL[top]}]'") from None


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


#: Thread-count variables of the BLAS libraries numpy may use.
_BLAS_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _blas_threads() -> int:
    """Threads this process's BLAS runs (threadpoolctl when installed; else OpenBLAS's
    default, one per usable core)."""
    try:
        from threadpoolctl import threadpool_info
        n = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
        if n:
            return max(n)
    except Exception:            # not installed, or a library it cannot query
        pass
    return _cpus()


@contextlib.contextmanager
def _worker_env(workers: int | None):
    """The environment worker processes started here inherit, restored afterwards.

    * BLAS threads as in this process. Dask's nanny, joblib's loky and Ray all set 1 by
      default, and a multi-threaded BLAS sums a long dot product in a thread-count-dependent
      order: the last bit of a bound computed with ``np.dot`` then depends on the worker
      (seen at fmt20, eps0 = 2.5, n = 1e7). Same threads, same rows as a sequential run.
    * ``SHUFFLEDP_THREADS`` = cores per worker (when ``workers`` is given), so k workers do
      not each start a pool as wide as the machine (shuffledp's own threads do not change
      any answer: ``shuffledp.core._parallel``).

    Variables the user set win.
    """
    want = {}
    if workers:
        want["SHUFFLEDP_THREADS"] = str(max(1, _cpus() // workers))
    if not any(v in os.environ for v in _BLAS_VARS):
        k = str(_blas_threads())
        want.update({v: k for v in _BLAS_VARS})
    set_here = [k for k in want if k not in os.environ]
    for k in set_here:
        os.environ[k] = want[k]
    try:
        yield
    finally:
        for k in set_here:
            os.environ.pop(k, None)


class Backend:
    """``with open_backend(...) as b: for out in b.imap(fn, items): ...`` (input order)."""

    name = "sequential"
    #: Tasks in flight at most (submitted, not yet yielded).
    window = 1
    #: Tasks that run at the same time.
    slots = 1

    def describe(self) -> str:
        return "sequential, in this process"

    def imap(self, fn, items):
        for x in items:
            yield fn(x)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _ordered(submit, result, cancel, items, window: int):
    """Submit up to ``window`` items ahead, yield results in input order; on an early exit
    (an error, Ctrl-C, a consumer that stops) cancel what is still pending."""
    pending = collections.deque()
    try:
        for x in items:
            pending.append(submit(x))
            if len(pending) >= window:
                yield result(pending.popleft())
        while pending:
            yield result(pending.popleft())
    finally:
        if pending:
            cancel(list(pending))


class _Joblib(Backend):
    def __init__(self, backend: str, jobs: int):
        self.name = backend
        self._joblib = _need("joblib", f"--backend {backend}")
        self.jobs = jobs
        self._stack = contextlib.ExitStack()
        if backend != "threading":
            self._stack.enter_context(_worker_env(self.workers))

    @property
    def workers(self) -> int:
        return _cpus() if self.jobs < 0 else self.jobs

    @property
    def window(self):
        return 2 * self.workers

    @property
    def slots(self):
        return self.workers

    def describe(self):
        kind = "threads" if self.name == "threading" else "worker processes"
        return f"joblib {self.name}, {self.workers} {kind} on this machine"

    def imap(self, fn, items):
        jl = self._joblib
        # return_as="generator": answers in input order as they complete, at most
        # pre_dispatch points dispatched ahead (joblib >= 1.3).
        par = jl.Parallel(n_jobs=self.jobs, backend=self.name, return_as="generator",
                          pre_dispatch="2 * n_jobs", batch_size=1)
        yield from par(jl.delayed(fn)(x) for x in items)

    def close(self):
        self._stack.close()


def _scheduler_from_env():
    addr = os.environ.get("DASK_SCHEDULER_ADDRESS", "").strip()
    if addr:
        return addr
    try:                      # dask's own configuration (a YAML file, or the variable above
        import dask           # when dask was imported before it was set)
    except ImportError:
        return None
    return dask.config.get("scheduler-address", None) or None


def _nanny_config():
    """Dask settings for starting local workers whose malloc behaves as in this process.

    Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in its workers by default, which turns off
    glibc's adaptive mmap threshold: every large temporary array is then mapped and
    unmapped afresh, and the page faults cost more system time than the sweep's arithmetic
    (seen: 76 s of system time against 10 s sequential on the 300-point sweep). The BLAS
    variables it would set to 1 are taken from this process's environment (``_worker_env``).
    """
    import dask
    if os.environ.get("MALLOC_TRIM_THRESHOLD_"):
        return contextlib.nullcontext()              # the user's choice
    # None: the nanny leaves the variable unset in the workers.
    return dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})


def _local_spec(spec: str):
    """``local`` or ``local:N`` -> number of workers (None: not a local spec)."""
    s = spec.strip()
    if s == "local":
        return _cpus()
    if s.startswith("local:"):
        arg = s[len("local:"):]
        try:
            k = int(arg)
        except ValueError:
            k = 0
        if k < 1:
            raise ValueError(f"--scheduler local:N needs a number of workers N >= 1; got {spec!r}")
        return k
    return None


class _Dask(Backend):
    name = "dask"

    def __init__(self, scheduler):
        distributed = _need("distributed", "--backend dask")
        self._stack = contextlib.ExitStack()
        self._own = True
        if isinstance(scheduler, distributed.Client):
            self.client, self._own = scheduler, False
            self.where = f"the given client ({scheduler.scheduler.address})"
        else:
            k = _local_spec(scheduler)
            if k is not None:
                # One thread per worker process: the points are CPU-bound Python and numpy,
                # so processes, not threads, run them side by side. Dashboard on a free
                # port (None would still claim 8787, and warn when another cluster has it).
                self._stack.enter_context(_worker_env(k))
                with _nanny_config():
                    cluster = self._stack.enter_context(distributed.LocalCluster(
                        n_workers=k, threads_per_worker=1, processes=True,
                        dashboard_address=":0"))
                self.where = f"a local cluster of {k} worker processes"
                scheduler = cluster
            else:
                self.where = f"the scheduler at {scheduler}"
            try:
                self.client = self._stack.enter_context(distributed.Client(scheduler))
            except (OSError, TimeoutError) as exc:
                self._stack.close()
                raise ValueError(f"--scheduler: cannot reach a Dask scheduler at "
                                 f"{scheduler!r}: {exc}") from None

    @property
    def slots(self):
        try:
            return max(1, sum(w.get("nthreads", 1)
                              for w in self.client.scheduler_info()["workers"].values()))
        except Exception:         # pragma: no cover - a scheduler that does not say
            return 1

    @property
    def window(self):
        # Enough ahead that one slow task does not leave the other workers idle, few
        # enough that pending answers stay a bounded amount of memory.
        return max(32, 4 * self.slots)

    def describe(self):
        n = len(self.client.scheduler_info()["workers"])
        return f"dask, {n} workers on {self.where}"

    def imap(self, fn, items):
        c = self.client
        yield from _ordered(lambda x: c.submit(fn, x, pure=False), lambda f: f.result(),
                            c.cancel, items, self.window)

    def close(self):
        self._stack.close()


class _Ray(Backend):
    name = "ray"

    def __init__(self, address, jobs):
        ray = _need("ray", "--backend ray")
        self._ray = ray
        self._own = not ray.is_initialized()
        self._stack = contextlib.ExitStack()
        if self._own:
            import logging
            kw = {}
            if address is None and not os.environ.get("RAY_ADDRESS"):
                # A new local instance: --jobs CPUs (default: all of this machine's); its
                # workers inherit this environment (_worker_env).
                kw["num_cpus"] = _cpus() if jobs in (None, -1) else jobs
                self.where = f"a local Ray instance with {kw['num_cpus']} CPUs"
                self._stack.enter_context(_worker_env(kw["num_cpus"]))
            else:
                self.where = f"the Ray cluster at {address or os.environ['RAY_ADDRESS']}"
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.WARNING, **kw)
            except ConnectionError as exc:
                self._stack.close()
                raise ValueError(f"--address: cannot reach a Ray cluster at "
                                 f"{address!r}: {exc}") from None
        else:
            self.where = "the Ray instance this process already uses"
        self._remote = {}

    @property
    def slots(self):
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    @property
    def window(self):
        return max(32, 4 * self.slots)

    def describe(self):
        return f"ray, {int(self._ray.cluster_resources().get('CPU', 0))} CPUs on {self.where}"

    def imap(self, fn, items):
        # Plain Ray tasks (not joblib's Ray backend, which cannot stream a generator).
        ray = self._ray
        task = self._remote.get(fn)
        if task is None:
            task = self._remote[fn] = ray.remote(num_cpus=1)(fn)

        def cancel(refs):
            for r in refs:
                ray.cancel(r, force=True)
        yield from _ordered(task.remote, ray.get, cancel, items, self.window)

    def close(self):
        if self._own and self._ray.is_initialized():
            self._ray.shutdown()
        self._stack.close()


def open_backend(backend: str | None = None, *, jobs: int | None = None, scheduler=None,
                 address: str | None = None) -> Backend:
    """The backend a sweep asked for, checked: options that would be ignored, or a parallel
    backend with nothing to run on, are errors (never a silent sequential run).

    * ``None``: ``dask`` when ``scheduler`` is given, ``ray`` when ``address`` is,
      ``loky`` when ``jobs`` is not 1, else sequential.
    * ``loky`` / ``multiprocessing`` / ``threading``: joblib on this machine, ``jobs``
      workers (-1: all cores; at least 2).
    * ``dask``: ``scheduler`` is an address (``tcp://host:8786``), ``local:N`` (start a
      ``LocalCluster`` of N worker processes here) or a ``distributed.Client``; default
      ``DASK_SCHEDULER_ADDRESS`` (or dask's ``scheduler-address`` setting).
    * ``ray``: ``address`` of a running cluster (default ``RAY_ADDRESS``; else a new local
      instance with ``jobs`` CPUs, all cores by default).
    """
    if backend is None:
        backend = ("dask" if scheduler is not None else "ray" if address is not None
                   else "sequential" if jobs in (None, 1) else "loky")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if scheduler is not None and backend != "dask":
        raise ValueError(f"--scheduler is the Dask scheduler; it needs --backend dask "
                         f"(got --backend {backend})")
    if address is not None and backend != "ray":
        raise ValueError(f"--address is a Ray cluster's address; it needs --backend ray "
                         f"(got --backend {backend})")
    if jobs is not None and (not isinstance(jobs, int) or isinstance(jobs, bool)
                             or jobs == 0 or jobs < -1):
        raise ValueError(f"jobs must be an integer >= 1, or -1 for all cores; got {jobs!r}")
    if backend == "sequential":
        if jobs not in (None, 1):
            raise ValueError(f"a sequential sweep runs one job; got --jobs {jobs}")
        return Backend()
    if backend in JOBLIB_BACKENDS:
        if jobs in (None, 1):
            raise ValueError(f"--backend {backend} runs --jobs N workers on this machine; "
                             f"give N >= 2 (or -1 for all cores), e.g. --jobs 2")
        return _Joblib(backend, jobs)
    if backend == "dask":
        if jobs is not None:
            raise ValueError("--jobs does not apply to --backend dask: the workers are the "
                             "scheduler's (--scheduler local:N starts N here)")
        if scheduler is None:
            scheduler = _scheduler_from_env()
        if scheduler is None:
            raise ValueError("--backend dask needs a scheduler: --scheduler ADDRESS (e.g. "
                             "tcp://10.0.0.5:8786), --scheduler local:N to start N worker "
                             "processes here, or DASK_SCHEDULER_ADDRESS in the environment")
        return _Dask(scheduler)
    if jobs is not None and (address is not None or os.environ.get("RAY_ADDRESS")):
        raise ValueError("--jobs does not apply to a running Ray cluster (--address or "
                         "RAY_ADDRESS): its CPUs are the cluster's")
    return _Ray(address, jobs)
