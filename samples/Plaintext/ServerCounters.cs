using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Globalization;
using System.Linq;
using Falconet.Diagnostics;
using Falconet.Server;

namespace Falconet.Samples.Plaintext;

/// <summary>Adds up what the <c>Falconet.Server</c> meter counts (rejected requests, closed and refused connections, by reason) for the --stats lines.</summary>
internal sealed class ServerCounters : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<(string Instrument, string Reason), long> _counts = new();

    public ServerCounters()
    {
        // Only the counters the --stats lines report: they count rare events. Listening to the per-request instruments
        // (request duration, active requests) would make this listener allocate on every request and hide the server's
        // own allocation figure.
        _listener.InstrumentPublished = static (instrument, listener) =>
        {
            if (instrument.Meter.Name == ServerMetrics.MeterName && IsReported(instrument.Name))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            string reason = string.Empty;
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                if (tag.Key == ServerMetrics.ReasonTag)
                {
                    reason = tag.Value as string ?? string.Empty;
                }
            }

            _counts.AddOrUpdate((instrument.Name, reason), static (_, added) => added, static (_, total, added) => total + added, value);
        });
        _listener.Start();
    }

    private static bool IsReported(string instrument)
        => instrument is ServerMetrics.RejectedConnectionsName or ServerMetrics.RejectedRequestsName or ServerMetrics.ClosedConnectionsName;

    /// <summary>One line for an instrument: <c>name total=N reason=N ...</c>, reasons in order.</summary>
    public string Line(string instrument)
    {
        var reasons = _counts.Where(entry => entry.Key.Instrument == instrument)
            .OrderBy(entry => entry.Key.Reason, StringComparer.Ordinal)
            .ToList();
        long total = reasons.Sum(entry => entry.Value);
        string detail = string.Concat(reasons.Select(entry => string.Create(CultureInfo.InvariantCulture, $" {entry.Key.Reason}={entry.Value}")));
        return string.Create(CultureInfo.InvariantCulture, $"{instrument} total={total}{detail}");
    }

    public void Dispose() => _listener.Dispose();
}
