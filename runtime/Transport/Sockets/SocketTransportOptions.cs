using System;

namespace Falconet.Transport.Sockets;

/// <summary>Settings of the <see cref="SocketTransportFactory"/>.</summary>
public sealed class SocketTransportOptions
{
    /// <summary>Where connection code runs when a socket operation completes (default <see cref="IoScheduling.ThreadPool"/>).</summary>
    public IoScheduling Scheduling { get; set; } = IoScheduling.ThreadPool;

    /// <summary>
    /// Number of memory pools, connections spread over them round robin (default: the processor count); with
    /// <see cref="IoScheduling.IoThreads"/> also the number of I/O threads, one per pool.
    /// </summary>
    public int IoThreadCount { get; set; } = Environment.ProcessorCount;

    /// <summary>Length of the queue of connections waiting to be accepted (default 512).</summary>
    public int Backlog { get; set; } = 512;

    /// <summary>Sets TCP_NODELAY on accepted connections (default true): responses leave without Nagle's delay.</summary>
    public bool NoDelay { get; set; } = true;

    /// <summary>
    /// Binds IP listeners with SO_REUSEPORT (default false), so that several processes listen on one port and the kernel
    /// spreads new connections over them (docs/deployment.md says how, and what happens to a closing listener's queue).
    /// </summary>
    public bool ReusePort { get; set; }

    /// <summary>Creates the lane pools with leak tracking (renting stacks captured); for tests.</summary>
    public bool TrackLeaks { get; set; }
}
