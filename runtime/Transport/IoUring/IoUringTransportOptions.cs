using System;
using Microsoft.Extensions.Logging;

namespace Falconet.Transport.IoUring;

/// <summary>Settings of the io_uring transport.</summary>
public sealed class IoUringTransportOptions
{
    /// <summary>Number of event loops, each on its own thread with its own ring and memory pool (default: the processor count, which honours the process's CPU affinity).</summary>
    public int LoopCount { get; set; } = Environment.ProcessorCount;

    /// <summary>
    /// Where connection code runs (default <see cref="IoScheduling.IoThreads"/>: on the loop thread that reaped the
    /// completion, parsing, handler and write without a hand-off). <see cref="IoScheduling.ThreadPool"/> runs it on the
    /// thread pool instead, so a handler that blocks stalls no loop, at the cost of two hand-offs per request.
    /// </summary>
    public IoScheduling Scheduling { get; set; } = IoScheduling.IoThreads;

    /// <summary>
    /// Binds IP listeners with SO_REUSEPORT even with one loop (default false), so that several processes listen on one port
    /// and the kernel spreads new connections over all their sockets (with more than one loop, every listener has it
    /// already). See docs/deployment.md.
    /// </summary>
    public bool ReusePort { get; set; }

    /// <summary>The listen backlog of each listening socket.</summary>
    public int Backlog { get; set; } = 512;

    /// <summary>Disables Nagle's algorithm on accepted connections (default true; set on the listening sockets, which accepted ones inherit).</summary>
    public bool NoDelay { get; set; } = true;

    /// <summary>Records a stack trace per rented block, for leak reports (slow; for tests and debugging).</summary>
    public bool TrackLeaks { get; set; }

    /// <summary>Where loop failures are logged (accept errors, a work item that threw); none by default.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>
    /// The most connections open at once (default unlimited); one accepted past it is reset at once on its loop, before it
    /// is handed out. The server sets this to its own connection limit.
    /// </summary>
    public int MaxConnections { get; set; } = int.MaxValue;

    /// <summary>
    /// A kernel thread per ring polls the submission queue (<c>IORING_SETUP_SQPOLL</c>), so a turn that only submits needs
    /// no system call (default false). It spends a core of its own while busy: see docs/runtime-io.md for when it pays.
    /// </summary>
    public bool SubmissionPolling { get; set; }

    /// <summary>
    /// Batched turns under load (default <see cref="TimeSpan.Zero"/>: off). While a loop's thread has been on the CPU (its
    /// code and the kernel's work in its system calls) for at least 60 % of the last 2 ms, a turn that handled more than one completion makes the loop's next wait ask the kernel for as
    /// many completions again, returning early only once this long has passed with at least one ready
    /// (<c>io_uring_enter</c>'s <c>min_wait_usec</c>, Linux 6.12): fewer, fuller turns when many connections are busy, so
    /// fewer wake-ups and system calls per request, bought with up to this much latency per response. A loop busy less
    /// than 40 % of the time waits as without the option, so light load keeps its latency. At most 10 ms, whole
    /// microseconds; not with <see cref="SubmissionPolling"/>. On a kernel without the feature the transport fails to start
    /// with a message naming this option. See docs/runtime-io.md, "Batched turns".
    /// </summary>
    public TimeSpan BatchedTurnWait { get; set; }

    /// <summary>Tests only: the share of a window a loop must be busy for <see cref="BatchedTurnWait"/> to start batching (default 0.6; it stops 0.2 below).</summary>
    internal double BatchedTurnBusyShare { get; set; } = 0.6;

    /// <summary>
    /// How often a graceful close that still has a staged send in the kernel looks for the peer's progress (default 5 s):
    /// while the peer acknowledges bytes the send goes on; a whole interval without progress resets the connection.
    /// </summary>
    internal TimeSpan LingeringSendCheckInterval { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>How long the polling thread spins idle before it sleeps (with <see cref="SubmissionPolling"/>; default 1 s).</summary>
    public TimeSpan SubmissionPollingIdle { get; set; } = TimeSpan.FromSeconds(1);
}
