using System;
using System.Net;
using Microsoft.Extensions.Logging;

namespace Falconet.Server;

/// <summary>The log messages of the server lifecycle (source-generated).</summary>
internal static partial class ServerLog
{
    [LoggerMessage(EventId = 100, Level = LogLevel.Information, Message = "Listening on {EndPoint}")]
    public static partial void Listening(ILogger logger, EndPoint endPoint);

    [LoggerMessage(EventId = 101, Level = LogLevel.Information, Message = "Stopping: no new connections, finishing in-flight requests")]
    public static partial void Stopping(ILogger logger);

    [LoggerMessage(EventId = 102, Level = LogLevel.Warning, Message = "Shutdown timeout passed: aborting {Count} connections")]
    public static partial void AbortingConnections(ILogger logger, int count);

    [LoggerMessage(EventId = 103, Level = LogLevel.Information, Message = "Stopped")]
    public static partial void Stopped(ILogger logger);

    [LoggerMessage(EventId = 105, Level = LogLevel.Warning, Message = "Stopped while {Count} aborted connections still run their handler")]
    public static partial void HandlersStillRunning(ILogger logger, int count);

    [LoggerMessage(EventId = 106, Level = LogLevel.Information, Message = "libuv is not installed: running on the sockets transport (install the {Package} package for the libuv transport, which serves a request with less CPU)")]
    public static partial void LibuvUnavailable(ILogger logger, string package);

    [LoggerMessage(EventId = 104, Level = LogLevel.Warning, Message = "Accepting a connection failed")]
    public static partial void AcceptFailed(ILogger logger, Exception exception);
}
