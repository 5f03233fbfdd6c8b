using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net;
using System.Runtime.CompilerServices;
using Falconet.Diagnostics;

namespace Falconet.Http;

/// <summary>What one connection measures: its own start and, per request, the request's start. Lives in the connection.</summary>
internal struct ConnectionMeasurement
{
    private long _connectionStart;
    private long _requestStart;
    private bool _queued;
    private bool _active;
    private string? _activeRequestMethod;

    /// <summary>Marks a connection that <see cref="ServerMetrics.ConnectionQueued"/> counted.</summary>
    public void SetQueued(bool queued) => _queued = queued;

    /// <summary>The connection starts where the transport scheduled it: it leaves the queue and becomes active.</summary>
    public void ConnectionStarted(EndPoint? local)
    {
        if (_queued)
        {
            _queued = false;
            ServerMetrics.QueuedConnections.Add(-1, ServerMetrics.ConnectionTags(local));
        }

        if (ServerMetrics.ActiveConnections.Enabled)
        {
            _active = true;
            ServerMetrics.ActiveConnections.Add(1, ServerMetrics.ConnectionTags(local));
        }

        if (ServerMetrics.ConnectionDuration.Enabled)
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
            ServerMetrics.QueuedConnections.Add(-1, ServerMetrics.ConnectionTags(local));
        }

        if (_active)
        {
            _active = false;
            ServerMetrics.ActiveConnections.Add(-1, ServerMetrics.ConnectionTags(local));
        }

        if (_connectionStart != 0)
        {
            ServerMetrics.ConnectionDuration.Record(Stopwatch.GetElapsedTime(_connectionStart).TotalSeconds, ServerMetrics.ConnectionTags(local));
            _connectionStart = 0;
        }
    }

    /// <summary>A request head was parsed: it counts as active and its duration starts.</summary>
    /// <remarks>With no listener it is two field reads, as <see cref="RequestEnded"/>.</remarks>
    public void RequestStarted(HttpRequest request)
    {
        if (ServerMetrics.ActiveRequests.Enabled || ServerMetrics.RequestDuration.Enabled)
        {
            RecordRequestStarted(request);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RecordRequestStarted(HttpRequest request)
    {
        if (ServerMetrics.ActiveRequests.Enabled)
        {
            _activeRequestMethod = MethodTag(request);
            ServerMetrics.ActiveRequests.Add(1, new KeyValuePair<string, object?>("http.request.method", _activeRequestMethod),
                new KeyValuePair<string, object?>("url.scheme", "http"));
        }

        if (ServerMetrics.RequestDuration.Enabled)
        {
            _requestStart = Stopwatch.GetTimestamp();
        }
    }

    /// <summary>The response of the request is complete (or the request was rejected, or failed).</summary>
    /// <remarks>With no listener it is two field reads: what records is out of line, so its locals cost nothing here.</remarks>
    public void RequestEnded(HttpRequest request, int statusCode, Exception? failure)
    {
        if (_activeRequestMethod is not null || _requestStart != 0)
        {
            RecordRequestEnded(request, statusCode, failure);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RecordRequestEnded(HttpRequest request, int statusCode, Exception? failure)
    {
        if (_activeRequestMethod is { } method)
        {
            _activeRequestMethod = null;
            ServerMetrics.ActiveRequests.Add(-1, new KeyValuePair<string, object?>("http.request.method", method),
                new KeyValuePair<string, object?>("url.scheme", "http"));
        }

        if (_requestStart == 0)
        {
            return;
        }

        var tags = new TagList
        {
            { "http.request.method", MethodTag(request) },
            { "http.response.status_code", ServerMetrics.BoxStatusCode(statusCode) },
            { "network.protocol.name", "http" },
            { "network.protocol.version", VersionTag(request) },
            { "url.scheme", "http" },
        };
        if (failure is not null)
        {
            tags.Add("error.type", failure.GetType().FullName);
        }

        ServerMetrics.RequestDuration.Record(Stopwatch.GetElapsedTime(_requestStart).TotalSeconds, tags);
        _requestStart = 0;
    }

    private static string MethodTag(HttpRequest request)
        => request.Method is KnownMethod.Custom or KnownMethod.None ? "_OTHER" : request.MethodName;

    private static string VersionTag(HttpRequest request) => request.ProtocolVersion switch
    {
        HttpProtocolVersion.Http10 => "1.0",
        HttpProtocolVersion.Http2 => "2",
        _ => "1.1",
    };
}
