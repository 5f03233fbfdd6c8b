namespace Falconet.Server;

/// <summary>
/// Whether the process's threads run under Linux's <c>SCHED_BATCH</c> policy while the server runs
/// (<see cref="FalconetServerOptions.BatchScheduling"/>; docs/runtime-io.md, "Threads that wake each other").
/// </summary>
/// <remarks>
/// Where a completion moves connection code to another thread (the sockets transport, a transport on the thread pool),
/// the woken thread preempts the one that is still working through its batch whenever both share a core: two context
/// switches per request. Under <c>SCHED_BATCH</c> a woken thread waits for the running one to block or use up its
/// slice instead; nothing else changes (nice values stay, and threads of another policy are left as they are).
/// </remarks>
public enum BatchScheduling
{
    /// <summary>
    /// On Linux, while the transport moves connection code between threads (<see cref="Transport.ITransportFactory.HandsOffCompletions"/>);
    /// otherwise off. Where the kernel refuses the policy the server logs why and runs on without it.
    /// </summary>
    Auto,

    /// <summary>Always, whatever the transport; a start where the policy cannot be set (not Linux, refused by the kernel) fails with the reason.</summary>
    On,

    /// <summary>Never: the process's threads keep the policy they have.</summary>
    Off,
}
