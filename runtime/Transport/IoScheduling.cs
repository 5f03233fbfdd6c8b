namespace Falconet.Transport;

/// <summary>Where a connection's code runs when one of its socket operations completes.</summary>
/// <remarks>
/// Measured on the load harness (docs/benchmarks.md, "Where connection code runs"): handing each completion to a
/// dedicated I/O thread costs more than the owner-thread pool path it buys, so <see cref="ThreadPool"/> is the default.
/// </remarks>
public enum IoScheduling
{
    /// <summary>
    /// On the thread that completed the operation: a thread-pool thread, or the socket engine's own thread when
    /// the process runs with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1. No hand-off; memory comes from pool
    /// shards through their lock-free shared path. A handler that blocks holds one thread-pool thread.
    /// </summary>
    ThreadPool,

    /// <summary>
    /// On one of the transport's dedicated I/O threads (falconet-io-N), each with its own pool used on the owner
    /// path. Every completion is handed to that thread; a handler that blocks stalls every connection of its thread.
    /// </summary>
    IoThreads,
}
