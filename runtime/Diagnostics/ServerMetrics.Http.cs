using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Sockets;
using System.Threading;

namespace Falconet.Diagnostics;

/// <summary>
/// The request and connection instruments of the <c>Falconet.Server</c> meter: the OpenTelemetry HTTP server semantic
/// conventions for requests, and connection instruments named like Kestrel's under <c>falconet.server.</c>.
/// </summary>
/// <remarks>
/// Every instrument is checked with <see cref="Instrument.Enabled"/> before anything is measured: with no listener a
/// request costs two field reads and allocates nothing. Attribute values are cached strings and boxes.
/// </remarks>
public static partial class ServerMetrics
{
    /// <summary>Histogram (seconds): how long requests took, from the end of their head to the end of their response (OpenTelemetry <c>http.server.request.duration</c>).</summary>
    public const string RequestDurationName = "http.server.request.duration";

    /// <summary>UpDownCounter: requests being handled right now (OpenTelemetry <c>http.server.active_requests</c>).</summary>
    public const string ActiveRequestsName = "http.server.active_requests";

    /// <summary>UpDownCounter: connections open right now.</summary>
    public const string ActiveConnectionsName = "falconet.server.active_connections";

    /// <summary>Histogram (seconds): how long connections stayed open.</summary>
    public const string ConnectionDurationName = "falconet.server.connection.duration";

    /// <summary>UpDownCounter: connections accepted and waiting to be started where the transport schedules them.</summary>
    public const string QueuedConnectionsName = "falconet.server.queued_connections";

    internal static readonly Histogram<double> RequestDuration = s_meter.CreateHistogram(
        RequestDurationName, "s", "Duration of HTTP server requests.",
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] });

    internal static readonly UpDownCounter<long> ActiveRequests = s_meter.CreateUpDownCounter<long>(
        ActiveRequestsName, "{request}", "Number of active HTTP server requests.");

    internal static readonly UpDownCounter<long> ActiveConnections = s_meter.CreateUpDownCounter<long>(
        ActiveConnectionsName, "{connection}", "Number of connections that are currently open.");

    internal static readonly Histogram<double> ConnectionDuration = s_meter.CreateHistogram(
        ConnectionDurationName, "s", "Duration of connections.",
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300] });

    internal static readonly UpDownCounter<long> QueuedConnections = s_meter.CreateUpDownCounter<long>(
        QueuedConnectionsName, "{connection}", "Number of connections accepted and not yet started.");

    private static readonly object?[] s_statusCodes = new object?[600];

    /// <summary>Called by the accept loop before a connection is handed to <c>TransportConnection.Schedule</c>; true when it was counted as queued.</summary>
    internal static bool ConnectionQueued(EndPoint? local)
    {
        if (!QueuedConnections.Enabled)
        {
            return false;
        }

        QueuedConnections.Add(1, ConnectionTags(local));
        return true;
    }

    /// <summary>Returns the boxed status code of the cache (one box per code for the life of the process).</summary>
    internal static object BoxStatusCode(int statusCode)
    {
        if ((uint)statusCode >= (uint)s_statusCodes.Length)
        {
            return statusCode;
        }

        object? box = Volatile.Read(ref s_statusCodes[statusCode]);
        if (box is null)
        {
            box = statusCode;
            Volatile.Write(ref s_statusCodes[statusCode], box);
        }

        return box;
    }

    internal static TagList ConnectionTags(EndPoint? local)
    {
        var tags = new TagList
        {
            { "network.transport", "tcp" },
            { "network.protocol.name", "http" },
        };
        if (local is IPEndPoint ip)
        {
            tags.Add("network.type", ip.AddressFamily == AddressFamily.InterNetworkV6 ? "ipv6" : "ipv4");
            tags.Add("server.port", ip.Port);
        }

        return tags;
    }
}
