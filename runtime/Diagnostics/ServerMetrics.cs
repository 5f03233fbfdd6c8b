using System.Collections.Generic;
using System.Diagnostics.Metrics;

namespace Falconet.Diagnostics;

/// <summary>The instruments of the <c>Falconet.Server</c> meter: what servers accepted, rejected and closed, and why.</summary>
/// <remarks>
/// Counters are recorded only while a listener is enabled for them (<see cref="Instrument.Enabled"/>), so a server that
/// nobody observes pays one field read per event. Reasons are short snake_case strings, stable across versions, carried
/// in the tag <see cref="ReasonTag"/>.
/// </remarks>
public static partial class ServerMetrics
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

    /// <summary>Counter: TLS handshakes of HTTPS endpoints that failed, by reason (timeout, not_tls, truncated, closed_by_peer, unknown_server_name, client_certificate, protocol, server_stopping).</summary>
    public const string FailedTlsHandshakesName = "falconet.server.tls.failed_handshakes";

    /// <summary>Histogram: duration of the TLS handshakes that completed, from the accept, in seconds, by protocol version.</summary>
    public const string TlsHandshakeDurationName = "falconet.server.tls.handshake.duration";

    /// <summary>Tag that carries the negotiated TLS version ("1.2", "1.3").</summary>
    public const string TlsProtocolVersionTag = "tls.protocol.version";

    /// <summary>The reason of a connection refused because the server's open-connection limit was reached.</summary>
    public const string ConnectionLimitReason = "connection_limit";

    /// <summary>Counter: HTTP/2 connection errors (GOAWAY with an error code, then the close), by reason, with <see cref="Http2ErrorCodeTag"/>.</summary>
    public const string Http2ConnectionErrorsName = "falconet.server.http2.connection_errors";

    /// <summary>Counter: HTTP/2 stream errors (RST_STREAM sent by the server), by reason, with <see cref="Http2ErrorCodeTag"/>.</summary>
    public const string Http2StreamErrorsName = "falconet.server.http2.stream_errors";

    /// <summary>Tag that carries the RFC 9113 error code of an HTTP/2 error ("PROTOCOL_ERROR", ...).</summary>
    public const string Http2ErrorCodeTag = "http2.error_code";

    private static readonly Meter s_meter = new(MeterName, "1.0");

    internal static readonly Counter<long> Http2ConnectionErrors = s_meter.CreateCounter<long>(
        Http2ConnectionErrorsName, "{connection}", "HTTP/2 connections ended with a connection error.");

    internal static readonly Counter<long> Http2StreamErrors = s_meter.CreateCounter<long>(
        Http2StreamErrorsName, "{stream}", "HTTP/2 streams reset by the server with a stream error.");

    internal static readonly Counter<long> RejectedRequests = s_meter.CreateCounter<long>(
        RejectedRequestsName, "{request}", "Requests answered by the server with an error status instead of the application.");

    internal static readonly Counter<long> ClosedConnections = s_meter.CreateCounter<long>(
        ClosedConnectionsName, "{connection}", "Connections the server closed on its own initiative.");

    internal static readonly Counter<long> RejectedConnections = s_meter.CreateCounter<long>(
        RejectedConnectionsName, "{connection}", "Connections refused when they were accepted.");

    internal static readonly Counter<long> FailedTlsHandshakes = s_meter.CreateCounter<long>(
        FailedTlsHandshakesName, "{handshake}", "TLS handshakes that failed, by reason.");

    internal static readonly Histogram<double> TlsHandshakeDuration = s_meter.CreateHistogram<double>(
        TlsHandshakeDurationName, "s", "Duration of completed TLS handshakes.",
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] });

    /// <summary>Records a completed handshake of <paramref name="seconds"/>, only when someone listens.</summary>
    internal static void RecordTlsHandshake(double seconds, string protocolVersion)
    {
        if (TlsHandshakeDuration.Enabled)
        {
            TlsHandshakeDuration.Record(seconds, new KeyValuePair<string, object?>(TlsProtocolVersionTag, protocolVersion));
        }
    }

    /// <summary>Adds one to an HTTP/2 error counter with its reason and error code, only when someone listens.</summary>
    internal static void CountHttp2Error(Counter<long> counter, string reason, string errorCode)
    {
        if (counter.Enabled)
        {
            counter.Add(1, new KeyValuePair<string, object?>(ReasonTag, reason), new KeyValuePair<string, object?>(Http2ErrorCodeTag, errorCode));
        }
    }

    /// <summary>Adds one to <paramref name="counter"/> with <paramref name="reason"/>, only when someone listens.</summary>
    internal static void Count(Counter<long> counter, string reason)
    {
        if (counter.Enabled)
        {
            counter.Add(1, new KeyValuePair<string, object?>(ReasonTag, reason));
        }
    }
}
