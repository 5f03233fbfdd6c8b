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

    /// <summary>
    /// An object the application keeps with the connection across its requests (null at first): per-connection state
    /// that must not be made again for every request, such as the ASP.NET Core integration's feature objects.
    /// </summary>
    public object? ConnectionState { get; set; }

    /// <summary>How many requests this connection has started, this one included.</summary>
    public long RequestNumber => _connection.RequestCount;

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
    /// Closes the connection at once (TCP reset) after the handler returns; nothing more is sent. Cancels
    /// <see cref="RequestAborted"/>.
    /// </summary>
    public void Abort() => _connection.RequestAbort();

    /// <summary>
    /// Reports that the handler failed after its response started, for a framework that logs the failure itself (the
    /// ASP.NET Core integration): once the handler returns, the response ends as when a handler throws then, what it wrote
    /// sent and the connection closed without the response's end.
    /// </summary>
    internal void FailStartedResponse() => _connection.FailStartedResponse();
}
