using System.Net;

namespace Falconet.Server;

/// <summary>
/// A plain-HTTP endpoint of <see cref="FalconetServerOptions.Endpoints"/> that serves other protocols than the server's
/// <see cref="FalconetServerOptions.Protocols"/>, such as an HTTP/2-only port (prior knowledge, as gRPC clients use).
/// </summary>
public sealed class HttpEndpoint : IPEndPoint
{
    /// <summary>Listens on <paramref name="address"/> and <paramref name="port"/> with <paramref name="protocols"/>.</summary>
    public HttpEndpoint(IPAddress address, int port, HttpProtocols protocols)
        : base(address, port)
    {
        Protocols = protocols;
    }

    /// <summary>The protocols this endpoint serves.</summary>
    public HttpProtocols Protocols { get; }
}
