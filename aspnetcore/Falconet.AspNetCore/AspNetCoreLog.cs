using System;
using Microsoft.Extensions.Logging;

namespace Falconet.AspNetCore;

/// <summary>The log messages of the ASP.NET Core integration (event ids 500-549, category Falconet.AspNetCore).</summary>
internal static partial class AspNetCoreLog
{
    [LoggerMessage(EventId = 500, Level = LogLevel.Error, Message = "Connection id \"{ConnectionId}\", Request id \"{TraceIdentifier}\": An unhandled exception was thrown by the application.")]
    public static partial void ApplicationError(ILogger logger, string connectionId, string traceIdentifier, Exception exception);

    [LoggerMessage(EventId = 501, Level = LogLevel.Warning, Message = "Connection id \"{ConnectionId}\", Request id \"{TraceIdentifier}\": the response had started when the application failed; what it wrote is sent, then the connection closes without its end.")]
    public static partial void AbortedAfterStart(ILogger logger, string connectionId, string traceIdentifier);

    [LoggerMessage(EventId = 502, Level = LogLevel.Error, Message = "Connection id \"{ConnectionId}\", Request id \"{TraceIdentifier}\": an OnCompleted callback failed.")]
    public static partial void OnCompletedFailed(ILogger logger, string connectionId, string traceIdentifier, Exception exception);

    [LoggerMessage(EventId = 507, Level = LogLevel.Error, Message = "Connection id \"{ConnectionId}\": a connection OnCompleted callback failed.")]
    public static partial void ConnectionCompletedCallbackFailed(ILogger logger, string connectionId, Exception exception);

    [LoggerMessage(EventId = 508, Level = LogLevel.Debug, Message = "Connection id \"{ConnectionId}\", Request id \"{TraceIdentifier}\": the request body is malformed ({Reason}); answered by the server.")]
    public static partial void BadRequestBody(ILogger logger, string connectionId, string traceIdentifier, string reason);

    [LoggerMessage(EventId = 506, Level = LogLevel.Debug, Message = "Connection id \"{ConnectionId}\", Request id \"{TraceIdentifier}\": the request was aborted and the application stopped with OperationCanceledException.")]
    public static partial void RequestAborted(ILogger logger, string connectionId, string traceIdentifier);

    [LoggerMessage(EventId = 503, Level = LogLevel.Information, Message = "Now listening on: {Address}")]
    public static partial void ListeningOn(ILogger logger, string address);

    [LoggerMessage(EventId = 504, Level = LogLevel.Warning, Message = "Overriding address(es) '{Addresses}': binding to the endpoints configured in FalconetServerOptions.Endpoints instead.")]
    public static partial void OverridingAddresses(ILogger logger, string addresses);

    [LoggerMessage(EventId = 505, Level = LogLevel.Information, Message = "No address configured: listening on the default {Address}.")]
    public static partial void UsingDefaultAddress(ILogger logger, string address);
}
