using System;
using Microsoft.Extensions.Logging;

namespace Falconet.Transport.Libuv;

/// <summary>Settings of the libuv transport.</summary>
public sealed class LibuvTransportOptions
{
    /// <summary>Number of event loops, each on its own thread with its own memory pool (default: the processor count, which honours the process's CPU affinity).</summary>
    public int LoopCount { get; set; } = Environment.ProcessorCount;

    /// <summary>
    /// Where connection code runs (default <see cref="IoScheduling.IoThreads"/>: on the loop thread that received the
    /// bytes, parsing, handler and write without a hand-off). <see cref="IoScheduling.ThreadPool"/> runs it on the
    /// thread pool instead, so a handler that blocks stalls no loop, at the cost of two hand-offs per request.
    /// </summary>
    public IoScheduling Scheduling { get; set; } = IoScheduling.IoThreads;

    /// <summary>How accepted connections are spread over the loops (default <see cref="LibuvDistribution.ReusePort"/>; see docs/runtime-io.md for the measurement).</summary>
    public LibuvDistribution Distribution { get; set; } = LibuvDistribution.ReusePort;

    /// <summary>
    /// Binds IP listeners with SO_REUSEPORT even with one loop (default false), so that several processes listen on one port
    /// and the kernel spreads new connections over all their sockets (with <see cref="LibuvDistribution.ReusePort"/> and more
    /// than one loop, every listener has it already). See docs/deployment.md.
    /// </summary>
    public bool ReusePort { get; set; }

    /// <summary>The listen backlog of each listening socket.</summary>
    public int Backlog { get; set; } = 512;

    /// <summary>Disables Nagle's algorithm on accepted connections (default true).</summary>
    public bool NoDelay { get; set; } = true;

    /// <summary>Records a stack trace per rented block, for leak reports (slow; for tests and debugging).</summary>
    public bool TrackLeaks { get; set; }

    /// <summary>Where loop failures are logged (accept errors, a work item that threw); none by default.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>
    /// The most connections open at once (default unlimited); one accepted past it is reset at once on its loop, before it
    /// is handed out. A loop accepts a whole burst before anything else runs on it, so only it can hold a flood within
    /// the process's descriptors; the server sets this to its own connection limit.
    /// </summary>
    public int MaxConnections { get; set; } = int.MaxValue;
}

/// <summary>How the libuv transport spreads accepted connections over its loops.</summary>
public enum LibuvDistribution
{
    /// <summary>Every loop listens on its own socket bound with SO_REUSEPORT; the kernel spreads connections by a hash of their addresses. No hand-off.</summary>
    ReusePort,

    /// <summary>Loop 0 accepts every connection and hands them round robin to the loops (the others through their queue). Even spread, one hand-off per connection.</summary>
    Handoff,
}
