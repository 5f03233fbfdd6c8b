using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Server;

namespace Falconet.Transport.Tls;

/// <summary>
/// The TLS decorator: a transport over any other one. Its listeners accept from the inner transport's listeners and hand
/// out connections whose TLS handshake completed, which keep the transport contract (the HTTP layer runs over them
/// unchanged) and carry what was negotiated (<see cref="TransportConnection.TlsInfo"/>,
/// <see cref="TransportConnection.NegotiatedApplicationProtocol"/>).
/// </summary>
/// <remarks>
/// One factory per set of TLS settings (an HTTPS endpoint); it does not own the inner transport. Composition, from the
/// socket up: transport listener, then any decorator that must see the raw bytes first (a PROXY protocol header), then
/// this one, then HTTP.
/// </remarks>
internal sealed class TlsTransportFactory : ITransportFactory
{
    private readonly ITransportFactory _inner;
    private readonly TlsServerSettings _settings;
    private readonly ListenerContext _context;

    /// <exception cref="System.InvalidOperationException">The options cannot be honoured (no certificate, a certificate without its private key).</exception>
    public TlsTransportFactory(ITransportFactory inner, TlsServerOptions options, ListenerContext context)
    {
        _inner = inner;
        _settings = new TlsServerSettings(options, context.Clock);
        _context = context;
    }

    /// <summary>The endpoint's TLS settings, with the engine it runs (<see cref="TlsServerSettings.Engine"/>).</summary>
    public TlsServerSettings Settings => _settings;

    /// <summary>Logs the engine the endpoint runs, and why not OpenSSL when <see cref="TlsEngine.Auto"/> chose SslStream (once per endpoint, at start).</summary>
    public void LogEngine(string url)
    {
        if (_settings.AutoFallbackReason is { } reason)
        {
            TlsLog.EngineFellBack(_context.Logger, url, reason);
        }
        else
        {
            TlsLog.EngineChosen(_context.Logger, url, _settings.Engine, _settings.ChosenAutomatically ? "auto" : "TlsServerOptions.Engine");
        }
    }

    public IReadOnlyList<SlabMemoryPool> Pools => _inner.Pools;

    /// <summary>The inner transport's refusals: the decorator's own limit is its acceptor's (<see cref="IConnectionAdmission"/>).</summary>
    public long RefusedConnections => _inner.RefusedConnections;

    public bool HandsOffCompletions => _inner.HandsOffCompletions;

    public async ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken ct = default)
    {
        IConnectionListener inner = await _inner.BindAsync(endpoint, ct).ConfigureAwait(false);
        return new TlsConnectionListener(inner, _settings, _context);
    }
}
