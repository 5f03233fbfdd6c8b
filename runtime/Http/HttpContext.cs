using System.Net;

namespace Falconet.Http;

/// <summary>
/// The request and response being handled on one connection. The server makes one per connection and reuses
/// it for every request, so a handler must not keep it (or spans from it) after its task completes.
/// </summary>
public class HttpContext
{
    private readonly HttpConnection _connection;

    internal HttpContext(HttpConnection connection, HttpRequest request, HttpResponse response)
    {
        _connection = connection;
        Request = request;
        Response = response;
    }

    /// <summary>The current request.</summary>
    public HttpRequest Request { get; }

    /// <summary>The response to the current request.</summary>
    public HttpResponse Response { get; }

    /// <summary>The local endpoint of the connection.</summary>
    public EndPoint? LocalEndPoint => _connection.LocalEndPoint;

    /// <summary>The remote endpoint of the connection.</summary>
    public EndPoint? RemoteEndPoint => _connection.RemoteEndPoint;

    /// <summary>A number that identifies the connection within the server.</summary>
    public long ConnectionId => _connection.Id;

    /// <summary>How many requests this connection has started, this one included.</summary>
    public long RequestNumber => _connection.RequestCount;

    /// <summary>The transport the connection runs on (TLS layers read their negotiated parameters from it).</summary>
    internal Falconet.Transport.TransportConnection Transport => _connection.Transport;

    /// <summary>Closes the connection at once (TCP reset) after the handler returns; nothing more is sent.</summary>
    public void Abort() => _connection.RequestAbort();
}
