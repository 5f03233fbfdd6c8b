using System.Net;
using System.Threading;
using Falconet.Transport;

namespace Falconet.Http;

/// <summary>
/// What an <see cref="HttpContext"/> asks of the protocol that carries its request: the HTTP/1.1 connection, or the HTTP/2
/// stream. None of it is on a request's hot path.
/// </summary>
internal interface IHttpContextOwner
{
    long ConnectionId { get; }

    EndPoint? LocalEndPoint { get; }

    EndPoint? RemoteEndPoint { get; }

    long RequestNumber { get; }

    TransportConnection Transport { get; }

    CancellationToken RequestAborted { get; }

    /// <summary>The HTTP/2 stream identifier; 0 on HTTP/1.1.</summary>
    int StreamId { get; }

    void Abort();

    /// <summary>Resets the request with an HTTP/2 error code (RST_STREAM); on HTTP/1.1 the same as <see cref="Abort"/>.</summary>
    void Reset(int errorCode);
}
