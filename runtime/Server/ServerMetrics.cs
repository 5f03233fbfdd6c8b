using System.Collections.Generic;
using System.Diagnostics.Metrics;

namespace Falconet.Server;

/// <summary>The instruments of the <c>Falconet.Server</c> meter: what servers accepted, rejected and closed, and why.</summary>
/// <remarks>
/// Counters are recorded only while a listener is enabled for them (<see cref="Instrument.Enabled"/>), so a server that
/// nobody observes pays one field read per event. Reasons are short snake_case strings, stable across versions, carried
/// in the tag <see cref="ReasonTag"/>.
/// </remarks>
public static class ServerMetrics
{
    /// <summary>Name of the meter.</summary>
    public const string MeterName = "Falconet.Server";

    /// <summary>Counter: requests the server answered itself with an error status instead of calling the application, by reason.</summary>
    public const string RejectedRequestsName = "falconet.server.rejected_requests";

    /// <summary>Counter: connections the server closed on its own initiative (timeouts, limits, data rates, rejections), by reason.</summary>
    public const string ClosedConnectionsName = "falconet.server.closed_connections";

    /// <summary>Counter: connections refused at accept (for example past the open-connection limit), by reason.</summary>
    public const string RejectedConnectionsName = "falconet.server.rejected_connections";

    /// <summary>Tag that carries the reason of a rejection or close.</summary>
    public const string ReasonTag = "falconet.reason";

    /// <summary>The reason of a connection refused because the server's open-connection limit was reached.</summary>
    public const string ConnectionLimitReason = "connection_limit";

    private static readonly Meter s_meter = new(MeterName, "1.0");

    internal static readonly Counter<long> RejectedRequests = s_meter.CreateCounter<long>(
        RejectedRequestsName, "{request}", "Requests answered by the server with an error status instead of the application.");

    internal static readonly Counter<long> ClosedConnections = s_meter.CreateCounter<long>(
        ClosedConnectionsName, "{connection}", "Connections the server closed on its own initiative.");

    internal static readonly Counter<long> RejectedConnections = s_meter.CreateCounter<long>(
        RejectedConnectionsName, "{connection}", "Connections refused when they were accepted.");

    /// <summary>Adds one to <paramref name="counter"/> with <paramref name="reason"/>, only when someone listens.</summary>
    internal static void Count(Counter<long> counter, string reason)
    {
        if (counter.Enabled)
        {
            counter.Add(1, new KeyValuePair<string, object?>(ReasonTag, reason));
        }
    }
}
