using System.IO;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Http1;
using Falconet.Server;

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
    /// that must not be made again for every request, such as the ASP.NET Core integration's feature objects. When the
    /// connection has closed, the server disposes it if it is <see cref="System.IAsyncDisposable"/> or
    /// <see cref="System.IDisposable"/> (after the last request; a failure is logged as a connection error). On HTTP/2 it
    /// belongs to the stream object, which the connection reuses for later streams: a connection holds as many as it ran
    /// streams at once, each disposed when the connection closed.
    /// </summary>
    public object? ConnectionState { get; set; }

    /// <summary>Disposes <see cref="ConnectionState"/> when it is disposable, once the connection closed.</summary>
    internal ValueTask DisposeConnectionStateAsync()
    {
        switch (ConnectionState)
        {
            case System.IAsyncDisposable asyncDisposable:
                return asyncDisposable.DisposeAsync();
            case System.IDisposable disposable:
                disposable.Dispose();
                break;
        }

        return default;
    }

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

    /// <summary>True when the calling thread is the connection's own I/O thread, where blocking stops its I/O.</summary>
    internal bool IsOnOwnIoThread => _connection.Transport.IsOwnIoThread;

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

    /// <summary>
    /// The least rate the current request's body must arrive at while the server waits for it: the server's
    /// <see cref="FalconetServerOptions.MinRequestBodyDataRate"/> unless the handler sets another; null turns it off for this
    /// request (a long-lived streaming upload that may pause). Every request starts with the server's again.
    /// </summary>
    public MinDataRate? MinRequestBodyDataRate
    {
        get => _connection.MinRequestBodyDataRate;
        set => _connection.MinRequestBodyDataRate = value;
    }

    /// <summary>
    /// The least rate the client must read the current response at while a send waits for it: the server's
    /// <see cref="FalconetServerOptions.MinResponseDataRate"/> unless the handler sets another; null turns it off for this
    /// request. Every request starts with the server's again.
    /// </summary>
    public MinDataRate? MinResponseDataRate
    {
        get => _connection.MinResponseDataRate;
        set => _connection.MinResponseDataRate = value;
    }

    /// <summary>
    /// True when the client asks to switch the connection to another protocol (a WebSocket, say) and the handler can still
    /// accept with <see cref="UpgradeAsync"/>. On HTTP/1.1: the request has an Upgrade header and the "upgrade" token in
    /// Connection, no body, and the response has not started; never on HTTP/2. A handler that does not upgrade answers it as a
    /// plain request.
    /// </summary>
    public bool CanUpgrade => _connection.CanUpgrade;

    /// <summary>
    /// Accepts the switch and returns the connection as an opaque duplex stream: on HTTP/1.1 the response head goes out at once
    /// as 101 Switching Protocols with the headers the handler set (it must set Upgrade to the protocol chosen; Connection:
    /// Upgrade is added), then reads return the client's bytes (those already received after the request head first) and
    /// writes are sent at once. The server reads no more HTTP from the connection, and closes it once the handler returns;
    /// keep the handler running while the stream is in use. A read returns 0 when the client closed its side or a stopping
    /// server aborted the connection after its shutdown timeout; cancelling a pending read or write aborts the connection.
    /// Writes that wait for the client are held to the minimum response data rate; reads have no minimum.
    /// </summary>
    /// <exception cref="System.InvalidOperationException"><see cref="CanUpgrade"/> is false, or the response has no Upgrade header.</exception>
    public ValueTask<Stream> UpgradeAsync(CancellationToken cancellationToken = default)
        => _connection.UpgradeAsync(cancellationToken);

    /// <summary>
    /// Reports that the handler failed after its response started, for a framework that logs the failure itself (the
    /// ASP.NET Core integration): once the handler returns, the response ends as when a handler throws then, what it wrote
    /// sent and the connection closed without the response's end.
    /// </summary>
    internal void FailStartedResponse() => _connection.FailStartedResponse();
}
