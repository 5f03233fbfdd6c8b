using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using Falconet.Http;

namespace Falconet.Server;

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

    private static readonly Histogram<double> s_requestDuration = s_meter.CreateHistogram(
        RequestDurationName, "s", "Duration of HTTP server requests.",
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] });

    private static readonly UpDownCounter<long> s_activeRequests = s_meter.CreateUpDownCounter<long>(
        ActiveRequestsName, "{request}", "Number of active HTTP server requests.");

    private static readonly UpDownCounter<long> s_activeConnections = s_meter.CreateUpDownCounter<long>(
        ActiveConnectionsName, "{connection}", "Number of connections that are currently open.");

    private static readonly Histogram<double> s_connectionDuration = s_meter.CreateHistogram(
        ConnectionDurationName, "s", "Duration of connections.",
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300] });

    private static readonly UpDownCounter<long> s_queuedConnections = s_meter.CreateUpDownCounter<long>(
        QueuedConnectionsName, "{connection}", "Number of connections accepted and not yet started.");

    private static readonly object?[] s_statusCodes = new object?[600];

    /// <summary>Called by the accept loop before a connection is handed to <c>TransportConnection.Schedule</c>; true when it was counted as queued.</summary>
    internal static bool ConnectionQueued(EndPoint? local)
    {
        if (!s_queuedConnections.Enabled)
        {
            return false;
        }

        s_queuedConnections.Add(1, ConnectionTags(local));
        return true;
    }

    /// <summary>Returns the boxed status code of the cache (one box per code for the life of the process).</summary>
    private static object BoxStatusCode(int statusCode)
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

    private static string MethodTag(HttpRequest request)
        => request.Method is KnownMethod.Custom or KnownMethod.None ? "_OTHER" : request.MethodName;

    private static string VersionTag(HttpRequest request) => request.ProtocolVersion switch
    {
        HttpProtocolVersion.Http10 => "1.0",
        HttpProtocolVersion.Http2 => "2",
        _ => "1.1",
    };

    private static TagList ConnectionTags(EndPoint? local)
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

    /// <summary>What one connection measures: its own start and, per request, the request's start. Lives in the connection.</summary>
    internal struct ConnectionMeasurement
    {
        private long _connectionStart;
        private long _requestStart;
        private bool _queued;
        private bool _active;
        private string? _activeRequestMethod;

        /// <summary>Marks a connection that <see cref="ConnectionQueued"/> counted.</summary>
        public void SetQueued(bool queued) => _queued = queued;

        /// <summary>The connection starts where the transport scheduled it: it leaves the queue and becomes active.</summary>
        public void ConnectionStarted(EndPoint? local)
        {
            if (_queued)
            {
                _queued = false;
                s_queuedConnections.Add(-1, ConnectionTags(local));
            }

            if (s_activeConnections.Enabled)
            {
                _active = true;
                s_activeConnections.Add(1, ConnectionTags(local));
            }

            if (s_connectionDuration.Enabled)
            {
                _connectionStart = Stopwatch.GetTimestamp();
            }
        }

        /// <summary>The connection ended and returned its blocks.</summary>
        public void ConnectionEnded(EndPoint? local)
        {
            if (_queued)
            {
                _queued = false;
                s_queuedConnections.Add(-1, ConnectionTags(local));
            }

            if (_active)
            {
                _active = false;
                s_activeConnections.Add(-1, ConnectionTags(local));
            }

            if (_connectionStart != 0)
            {
                s_connectionDuration.Record(Stopwatch.GetElapsedTime(_connectionStart).TotalSeconds, ConnectionTags(local));
                _connectionStart = 0;
            }
        }

        /// <summary>A request head was parsed: it counts as active and its duration starts.</summary>
        public void RequestStarted(HttpRequest request)
        {
            if (s_activeRequests.Enabled)
            {
                _activeRequestMethod = MethodTag(request);
                s_activeRequests.Add(1, new KeyValuePair<string, object?>("http.request.method", _activeRequestMethod),
                    new KeyValuePair<string, object?>("url.scheme", "http"));
            }

            if (s_requestDuration.Enabled)
            {
                _requestStart = Stopwatch.GetTimestamp();
            }
        }

        /// <summary>The response of the request is complete (or the request was rejected, or failed).</summary>
        public void RequestEnded(HttpRequest request, int statusCode, Exception? failure)
        {
            if (_activeRequestMethod is { } method)
            {
                _activeRequestMethod = null;
                s_activeRequests.Add(-1, new KeyValuePair<string, object?>("http.request.method", method),
                    new KeyValuePair<string, object?>("url.scheme", "http"));
            }

            if (_requestStart == 0)
            {
                return;
            }

            var tags = new TagList
            {
                { "http.request.method", MethodTag(request) },
                { "http.response.status_code", BoxStatusCode(statusCode) },
                { "network.protocol.name", "http" },
                { "network.protocol.version", VersionTag(request) },
                { "url.scheme", "http" },
            };
            if (failure is not null)
            {
                tags.Add("error.type", failure.GetType().FullName);
            }

            s_requestDuration.Record(Stopwatch.GetElapsedTime(_requestStart).TotalSeconds, tags);
            _requestStart = 0;
        }
    }
}
