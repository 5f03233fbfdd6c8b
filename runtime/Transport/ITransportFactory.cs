using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;

namespace Falconet.Transport;

/// <summary>Creates listeners for a transport (sockets, libuv); the HTTP layer and the server see only this contract.</summary>
/// <remarks>
/// Whoever creates a factory disposes it (when it is disposable), after every listener is unbound and every
/// connection disposed: the server disposes the built-in transport it creates, never one passed to it.
/// </remarks>
public interface ITransportFactory
{
    /// <summary>Every memory pool of the transport; connections rent from them (diagnostics: blocks outstanding, waiting until every block is back).</summary>
    IReadOnlyList<SlabMemoryPool> Pools { get; }

    /// <summary>Binds <paramref name="endpoint"/> and starts listening.</summary>
    ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default);
}
