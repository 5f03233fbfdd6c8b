using System.Net;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Transport;

/// <summary>A bound endpoint that hands out accepted connections until it is unbound.</summary>
public interface IConnectionListener : System.IAsyncDisposable
{
    /// <summary>The bound endpoint, with port 0 resolved to the port the system chose.</summary>
    EndPoint EndPoint { get; }

    /// <summary>Waits for the next connection; null once the listener is unbound or disposed.</summary>
    ValueTask<TransportConnection?> AcceptAsync(CancellationToken ct = default);

    /// <summary>Stops accepting: pending and later <see cref="AcceptAsync"/> calls return null; accepted connections are not affected.</summary>
    ValueTask UnbindAsync();
}
