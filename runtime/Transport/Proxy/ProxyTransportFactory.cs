using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Server;

namespace Falconet.Transport.Proxy;

/// <summary>
/// The PROXY protocol decorator: a transport over any other one whose listeners read each connection's PROXY header before
/// handing it out, as a connection whose remote endpoint is the client's (<see cref="ProxiedConnection"/>).
/// </summary>
/// <remarks>
/// Composition, from the socket up: transport listener, this decorator, then the TLS decorator for an HTTPS endpoint (the
/// header comes before the handshake), then HTTP. One factory per PROXY endpoint; it does not own the inner transport.
/// </remarks>
internal sealed class ProxyTransportFactory : ITransportFactory
{
    private readonly ITransportFactory _inner;
    private readonly ProxyProtocolEndPoint _settings;
    private readonly ListenerContext _context;
    private readonly long _headerTimeout;

    public ProxyTransportFactory(ITransportFactory inner, ProxyProtocolEndPoint settings, ListenerContext context)
    {
        _inner = inner;
        _settings = settings;
        _context = context;
        _headerTimeout = (long)(settings.HeaderTimeout.TotalSeconds * context.Clock.TimestampFrequency);
    }

    public IReadOnlyList<SlabMemoryPool> Pools => _inner.Pools;

    public long RefusedConnections => _inner.RefusedConnections;

    public bool HandsOffCompletions => _inner.HandsOffCompletions;

    public async ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default)
    {
        IConnectionListener inner = await _inner.BindAsync(endpoint, ct).ConfigureAwait(false);
        return new ProxyConnectionListener(inner, _settings, _headerTimeout, _context);
    }
}

/// <summary>A listener of the PROXY decorator: hands out only connections whose header was read and accepted.</summary>
internal sealed class ProxyConnectionListener(IConnectionListener inner, ProxyProtocolEndPoint settings, long headerTimeout, ListenerContext context)
    : PreparingListener<ProxyHeaderRead>(inner, context)
{
    public ProxyProtocolEndPoint Settings => settings;

    protected override ProxyHeaderRead Create(TransportConnection accepted, long now) => new(this, accepted, now, headerTimeout);

    protected override void LogAborted(int count) => ProxyLog.HeaderReadsAborted(Logger, count);
}
