using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;

namespace Falconet.Transport;

/// <summary>Creates listeners for a transport (sockets, libuv, or a decorator over one such as TLS); the HTTP layer and the server see only this contract.</summary>
/// <remarks>
/// Whoever creates a factory disposes it (when it is disposable), after every listener is unbound and every
/// connection disposed: the server disposes the built-in transport it creates, never one passed to it.
/// </remarks>
public interface ITransportFactory
{
    /// <summary>Every memory pool of the transport; connections rent from them (diagnostics: blocks outstanding, waiting until every block is back).</summary>
    IReadOnlyList<SlabMemoryPool> Pools { get; }

    /// <summary>
    /// Connections the transport reset at accept on its own since it was created, before anyone saw them (a connection
    /// limit of its own, such as libuv's <c>MaxConnections</c>); 0 for a transport without one. The server adds the
    /// refusals made while it runs to its <c>RefusedConnectionCount</c>.
    /// </summary>
    long RefusedConnections => 0;

    /// <summary>
    /// Whether a completed socket operation hands the connection's code to another thread (the thread pool, I/O threads)
    /// rather than running it on the thread that saw the completion; false for a transport that does not say. Such
    /// threads wake each other once or more per request, and the server's <c>BatchScheduling.Auto</c> keeps them from
    /// preempting each other then (docs/runtime-io.md, "Threads that wake each other").
    /// </summary>
    bool HandsOffCompletions => false;

    /// <summary>Binds <paramref name="endpoint"/> and starts listening.</summary>
    ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default);
}
