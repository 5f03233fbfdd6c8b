using System.Net;
using System.Threading;
using Falconet.Http.Http1;

namespace Falconet.Http;

/// <summary>
/// The request and response being handled on one connection. The server makes one per connection and reuses
/// it for every request, so a handler must not keep it (or spans from it) after its task completes.
/// </summary>
public class HttpContext
{
    private readonly IHttpContextOwner _connection;

    internal HttpContext(IHttpContextOwner connection, HttpRequest request, HttpResponse response)
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

    /// <summary>
    /// The client's endpoint: the connection's remote endpoint (the client's own address from a PROXY protocol header, see
    /// <see cref="Server.ProxyProtocolEndPoint"/>), or, under <see cref="Server.FalconetServerOptions.ForwardedHeaders"/>, the
    /// client a trusted proxy named in this request's forwarding headers (port 0 when the proxy gave none).
    /// </summary>
    public EndPoint? RemoteEndPoint => (EndPoint?)Request.Forwarded?.RemoteEndPoint ?? _connection.RemoteEndPoint;

    /// <summary>A number that identifies the connection within the server.</summary>
    public long ConnectionId => _connection.ConnectionId;

    /// <summary>
    /// An object the application keeps with the connection across its requests (null at first): per-connection state
    /// that must not be made again for every request, such as the ASP.NET Core integration's feature objects.
    /// </summary>
    public object? ConnectionState { get; set; }

    /// <summary>How many requests this connection has started, this one included.</summary>
    public long RequestNumber => _connection.RequestNumber;

    /// <summary>The HTTP/2 stream that carries the request; 0 on HTTP/1.1.</summary>
    public int StreamId => _connection.StreamId;

    /// <summary>The transport the connection runs on (TLS layers read their negotiated parameters from it).</summary>
    internal Falconet.Transport.TransportConnection Transport => _connection.Transport;

    /// <summary>
    /// Cancelled when the client goes away while the request is handled (its connection reached end of stream or was
    /// reset), when the request is aborted with <see cref="Abort"/>, or when a stopping server aborts the connection.
    /// Made on first use (a request that never asks allocates nothing) and reused by later requests of the connection.
    /// The server notices a client that goes away while an asynchronous handler waits; a handler that completes
    /// synchronously has already answered by then.
    /// </summary>
    public CancellationToken RequestAborted => _connection.RequestAborted;

    /// <summary>
    /// HTTP/1.1: closes the connection at once (TCP reset) after the handler returns; nothing more is sent. HTTP/2: resets the
    /// request's stream at once (RST_STREAM with INTERNAL_ERROR); the connection's other streams go on. Cancels
    /// <see cref="RequestAborted"/>.
    /// </summary>
    public void Abort() => _connection.Abort();

    /// <summary>
    /// HTTP/2: resets the request's stream at once with <paramref name="errorCode"/> (an RFC 9113 error code, such as
    /// <see cref="Http2ErrorCode.Cancel"/>); HTTP/1.1 has no such signal and does what <see cref="Abort"/> does.
    /// </summary>
    public void Reset(int errorCode) => _connection.Reset(errorCode);
}
