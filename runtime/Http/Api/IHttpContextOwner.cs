using System.IO;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Server;
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

    /// <summary>The current request's minimum body rate (see <see cref="HttpContext.MinRequestBodyDataRate"/>).</summary>
    MinDataRate? MinRequestBodyDataRate { get; set; }

    /// <summary>The current request's minimum response rate (see <see cref="HttpContext.MinResponseDataRate"/>).</summary>
    MinDataRate? MinResponseDataRate { get; set; }

    /// <summary>See <see cref="HttpContext.CanUpgrade"/>.</summary>
    bool CanUpgrade { get; }

    /// <summary>See <see cref="HttpContext.UpgradeAsync"/>.</summary>
    ValueTask<Stream> UpgradeAsync(CancellationToken cancellationToken);

    /// <summary>See <see cref="HttpContext.FailStartedResponse"/>.</summary>
    void FailStartedResponse();
}
