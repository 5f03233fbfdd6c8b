using System;
using Microsoft.Extensions.Logging;

namespace Falconet.Http;

/// <summary>The log messages of the HTTP layer (source-generated, no formatting unless the level is enabled).</summary>
internal static partial class HttpLog
{
    // Reason is the stable snake_case name of RequestRejections, the same as the metric tag, so logs and metrics join.
    [LoggerMessage(EventId = 1, Level = LogLevel.Debug, Message = "Connection {ConnectionId}: bad request ({Reason}), responding {StatusCode}: {Detail}")]
    public static partial void BadRequest(ILogger logger, long connectionId, string reason, int statusCode, string detail);

    [LoggerMessage(EventId = 2, Level = LogLevel.Error, Message = "Connection {ConnectionId}: the application failed while handling a request")]
    public static partial void ApplicationError(ILogger logger, long connectionId, Exception exception);

    [LoggerMessage(EventId = 3, Level = LogLevel.Debug, Message = "Connection {ConnectionId}: closed after an I/O error")]
    public static partial void ConnectionError(ILogger logger, long connectionId, Exception exception);

    [LoggerMessage(EventId = 4, Level = LogLevel.Warning, Message = "Connection {ConnectionId}: the response had started when the request failed; what it wrote is sent, then the connection closes without its end")]
    public static partial void AbortedAfterStart(ILogger logger, long connectionId);

    [LoggerMessage(EventId = 5, Level = LogLevel.Debug, Message = "Connection {ConnectionId}: the request head did not arrive within the request-headers timeout, responding 408")]
    public static partial void RequestHeadersTimedOut(ILogger logger, long connectionId);

    [LoggerMessage(EventId = 60, Level = LogLevel.Debug, Message = "Connection {ConnectionId}: HTTP/2 connection error {Reason} ({ErrorCode}): {Detail}")]
    public static partial void Http2ConnectionError(ILogger logger, long connectionId, string reason, string errorCode, string detail);

    [LoggerMessage(EventId = 61, Level = LogLevel.Debug, Message = "Connection {ConnectionId}: HTTP/2 stream {StreamId} reset, {Reason} ({ErrorCode})")]
    public static partial void Http2StreamError(ILogger logger, long connectionId, int streamId, string reason, string errorCode);

    [LoggerMessage(EventId = 62, Level = LogLevel.Debug, Message = "Connection {ConnectionId}: HTTP/2 stream {StreamId} is a malformed request: {Detail}")]
    public static partial void Http2MalformedRequest(ILogger logger, long connectionId, int streamId, string detail);

    [LoggerMessage(EventId = 40, Level = LogLevel.Debug, Message = "Connection {ConnectionId}: closed by the server ({Reason})")]
    public static partial void ClosedByServer(ILogger logger, long connectionId, string reason);
}
