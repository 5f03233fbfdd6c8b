using System;

namespace Falconet.Transport.Sockets;

/// <summary>Settings of the <see cref="SocketTransportFactory"/>.</summary>
public sealed class SocketTransportOptions
{
    /// <summary>Number of I/O lanes, each a thread with its own memory pool (default: the processor count).</summary>
    public int IoThreadCount { get; set; } = Environment.ProcessorCount;

    /// <summary>Length of the queue of connections waiting to be accepted (default 512).</summary>
    public int Backlog { get; set; } = 512;

    /// <summary>Sets TCP_NODELAY on accepted connections (default true): responses leave without Nagle's delay.</summary>
    public bool NoDelay { get; set; } = true;

    /// <summary>Creates the lane pools with leak tracking (renting stacks captured); for tests.</summary>
    public bool TrackLeaks { get; set; }
}
