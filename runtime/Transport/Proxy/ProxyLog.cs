using System.Net;
using Microsoft.Extensions.Logging;

namespace Falconet.Transport.Proxy;

/// <summary>The log messages of PROXY protocol endpoints (source-generated; event ids 430-439).</summary>
internal static partial class ProxyLog
{
    [LoggerMessage(EventId = 430, Level = LogLevel.Debug, Message = "Refused the connection from {RemoteEndPoint}: {Reason}")]
    public static partial void Refused(ILogger logger, EndPoint? remoteEndPoint, string reason);

    [LoggerMessage(EventId = 431, Level = LogLevel.Trace, Message = "PROXY header from {ProxyEndPoint}: v{Version} {Command}, client {ClientEndPoint}")]
    public static partial void HeaderRead(ILogger logger, EndPoint? proxyEndPoint, int version, ProxyCommand command, EndPoint? clientEndPoint);

    [LoggerMessage(EventId = 432, Level = LogLevel.Warning, Message = "Stopped while {Count} PROXY headers were still awaited; their connections were aborted")]
    public static partial void HeaderReadsAborted(ILogger logger, int count);
}
