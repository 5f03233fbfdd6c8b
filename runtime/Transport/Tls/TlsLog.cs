using System;
using System.Net;
using System.Security.Authentication;
using Microsoft.Extensions.Logging;

namespace Falconet.Transport.Tls;

/// <summary>The log messages of HTTPS endpoints and TLS handshakes (source-generated; event ids 400-429).</summary>
internal static partial class TlsLog
{
    [LoggerMessage(EventId = 400, Level = LogLevel.Debug, Message = "TLS handshake with {RemoteEndPoint} failed ({Reason}); the connection is closed")]
    public static partial void HandshakeFailed(ILogger logger, EndPoint? remoteEndPoint, string reason, Exception? exception);

    [LoggerMessage(EventId = 401, Level = LogLevel.Trace, Message = "TLS handshake with {RemoteEndPoint} completed: {Protocol} in {Milliseconds} ms")]
    public static partial void HandshakeCompleted(ILogger logger, EndPoint? remoteEndPoint, SslProtocols protocol, double milliseconds);

    [LoggerMessage(EventId = 402, Level = LogLevel.Information, Message = "Listening on {EndPoint} (HTTPS){Details}")]
    public static partial void ListeningHttps(ILogger logger, EndPoint endPoint, string details);

    [LoggerMessage(EventId = 404, Level = LogLevel.Information, Message = "HTTPS on {Url}: TLS engine {Engine} ({Choice})")]
    public static partial void EngineChosen(ILogger logger, string url, Server.TlsEngine engine, string choice);

    [LoggerMessage(EventId = 405, Level = LogLevel.Information, Message = "HTTPS on {Url}: TLS engine SslStream (auto), not OpenSsl: {Reason}")]
    public static partial void EngineFellBack(ILogger logger, string url, string reason);

    [LoggerMessage(EventId = 403, Level = LogLevel.Warning, Message = "Stopped while {Count} TLS handshakes were still running; their connections were aborted")]
    public static partial void HandshakesAborted(ILogger logger, int count);
}
