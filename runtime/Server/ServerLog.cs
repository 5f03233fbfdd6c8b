using System;
using System.Net;
using Microsoft.Extensions.Logging;

namespace Falconet.Server;

/// <summary>The log messages of the server lifecycle (source-generated).</summary>
internal static partial class ServerLog
{
    [LoggerMessage(EventId = 100, Level = LogLevel.Information, Message = "Listening on {EndPoint}{Details}")]
    public static partial void Listening(ILogger logger, EndPoint endPoint, string details);

    [LoggerMessage(EventId = 107, Level = LogLevel.Information, Message = "Draining: not ready anymore, serving as usual for {Seconds} s before connections close")]
    public static partial void Draining(ILogger logger, double seconds);

    [LoggerMessage(EventId = 108, Level = LogLevel.Error, Message = "The Draining callback failed; the stop goes on")]
    public static partial void DrainingCallbackFailed(ILogger logger, Exception exception);

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

    [LoggerMessage(EventId = 116, Level = LogLevel.Information, Message = "io_uring cannot be used here ({Reason}): running on the {Transport} transport instead")]
    public static partial void IoUringUnavailable(ILogger logger, string reason, string transport);

    [LoggerMessage(EventId = 117, Level = LogLevel.Information, Message = "Threads run under SCHED_BATCH ({Why}): a woken thread waits for the running one instead of preempting it (BatchScheduling)")]
    public static partial void BatchScheduling(ILogger logger, string why);

    [LoggerMessage(EventId = 118, Level = LogLevel.Warning, Message = "Threads keep their scheduling policy: {Reason}. The transport hands completions to other threads, which then preempt each other (BatchScheduling.Auto; set it to Off to silence this)")]
    public static partial void BatchSchedulingRefused(ILogger logger, string reason);

    [LoggerMessage(EventId = 104, Level = LogLevel.Warning, Message = "Accepting a connection failed")]
    public static partial void AcceptFailed(ILogger logger, Exception exception);

    [LoggerMessage(EventId = 110, Level = LogLevel.Debug, Message = "Refused a connection from {RemoteEndPoint}: {Reason} ({Limit} connections open)")]
    public static partial void ConnectionRefused(ILogger logger, EndPoint? remoteEndPoint, string reason, int limit);

    [LoggerMessage(EventId = 111, Level = LogLevel.Warning, Message = "Out of file descriptors: accepting paused, backing off while {Count} connections stay served")]
    public static partial void OutOfDescriptors(ILogger logger, int count, Exception exception);

    [LoggerMessage(EventId = 112, Level = LogLevel.Information, Message = "Accepting connections again after running out of file descriptors ({Count} connections open)")]
    public static partial void AcceptingAgain(ILogger logger, int count);

    [LoggerMessage(EventId = 114, Level = LogLevel.Debug, Message = "Released {Count} idle slabs ({Bytes} bytes) of the transport's pools")]
    public static partial void ReleasedIdleSlabs(ILogger logger, int count, long bytes);

    [LoggerMessage(EventId = 113, Level = LogLevel.Information, Message = "At most {Limit} connections open at once (file descriptor limit {DescriptorLimit}, -1 when unknown)")]
    public static partial void ConnectionLimit(ILogger logger, int limit, long descriptorLimit);

    [LoggerMessage(EventId = 115, Level = LogLevel.Error, Message = "Closing connection {ConnectionId} for the stop failed; it is aborted")]
    public static partial void StopCloseFailed(ILogger logger, long connectionId, Exception exception);
}
