using System;
using System.Net;
using System.Security.Cryptography.X509Certificates;

namespace Falconet.Server;

/// <summary>An endpoint that serves HTTPS: the address to listen on and the TLS settings of its connections.</summary>
public sealed class HttpsEndpoint
{
    /// <summary>
    /// Listens on <paramref name="endPoint"/> with <paramref name="tls"/>: an <see cref="IPEndPoint"/>, a Unix domain socket, an
    /// adopted listening socket (<see cref="Transport.ListenSocketEndPoint"/>), or a <see cref="ProxyProtocolEndPoint"/> around
    /// one of those (the PROXY header comes before the handshake).
    /// </summary>
    public HttpsEndpoint(EndPoint endPoint, TlsServerOptions tls)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        ArgumentNullException.ThrowIfNull(tls);
        EndPoint = endPoint;
        Tls = tls;
    }

    /// <summary>Listens on <paramref name="endPoint"/> with one server certificate (it must carry its private key) and default TLS settings.</summary>
    public HttpsEndpoint(EndPoint endPoint, X509Certificate2 certificate)
        : this(endPoint, new TlsServerOptions { ServerCertificate = certificate ?? throw new ArgumentNullException(nameof(certificate)) })
    {
    }

    /// <summary>The address to listen on (port 0 picks a free port; see <see cref="FalconetServer.BoundHttpsEndpoints"/>).</summary>
    public EndPoint EndPoint { get; }

    /// <summary>The TLS settings of the endpoint's connections.</summary>
    public TlsServerOptions Tls { get; }

    /// <summary>
    /// The HTTP versions this endpoint offers with ALPN (h2 preferred to http/1.1); null (the default) takes
    /// <see cref="FalconetServerOptions.Protocols"/>. ALPN offers those of <see cref="TlsServerOptions.ApplicationProtocols"/>
    /// the endpoint serves. <see cref="HttpProtocols.Http2"/> alone refuses a client that offers only http/1.1, and speaks
    /// HTTP/2 to a client that offered no ALPN protocol at all (an HTTP/1.1 request gets GOAWAY).
    /// </summary>
    public HttpProtocols? Protocols { get; init; }
}
