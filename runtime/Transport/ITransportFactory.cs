using System.Net;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Transport;

/// <summary>Creates listeners for a transport (sockets, libuv); the HTTP layer sees only this contract.</summary>
public interface ITransportFactory
{
    /// <summary>Binds <paramref name="endpoint"/> and starts listening.</summary>
    ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default);
}
